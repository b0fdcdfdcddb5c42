import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { detectHardware, parseNvidiaSmi } from "../../src/context/hardware.js";
import { HardwareDetectionError } from "../../src/core/errors.js";

describe("parseNvidiaSmi", () => {
  it("parses a single GPU line", () => {
    expect(parseNvidiaSmi("NVIDIA GeForce RTX 4090, 24564\n")).toEqual({
      gpuName: "NVIDIA GeForce RTX 4090",
      vramTotalMb: 24564,
      vramTotalGb: 24564 / 1024,
      gpus: [{ name: "NVIDIA GeForce RTX 4090", vramTotalMb: 24564 }],
    });
  });

  it("sums VRAM over several GPUs and keeps the first name", () => {
    const hw = parseNvidiaSmi("NVIDIA RTX A6000, 49140\r\nTesla T4, 15360\n\n");
    expect(hw.gpuName).toBe("NVIDIA RTX A6000");
    expect(hw.vramTotalMb).toBe(64500);
    expect(hw.gpus).toHaveLength(2);
  });

  it("keeps commas inside names (memory is after the last comma)", () => {
    expect(parseNvidiaSmi("Weird, GPU Name, 8192").gpuName).toBe("Weird, GPU Name");
  });

  it.each([
    ["", "no GPU lines"],
    ["NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.", 'Expected "name, memory"'],
    ["RTX 3060, [N/A]", "not an integer"],
    ["RTX 3060, 12.5", "not an integer"],
    [", 1024", 'Expected "name, memory"'],
    ["RTX, 0", "Unusable"],
  ])("garbage %j → HardwareDetectionError", (output, message) => {
    const error = (() => {
      try {
        parseNvidiaSmi(output);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(HardwareDetectionError);
    expect((error as HardwareDetectionError).message).toContain(message);
    expect((error as HardwareDetectionError).output).toBe(output);
  });

  it("property: any well-formed line set round-trips", () => {
    const name = fc.stringMatching(/^[A-Za-z][A-Za-z0-9 ,-]{0,30}[A-Za-z0-9]$/);
    fc.assert(
      fc.property(fc.array(fc.record({ name, mb: fc.integer({ min: 1, max: 200_000 }) }), { minLength: 1, maxLength: 8 }), (gpus) => {
        const hw = parseNvidiaSmi(gpus.map((g) => `${g.name}, ${g.mb}`).join("\n"));
        expect(hw.gpus).toEqual(gpus.map((g) => ({ name: g.name.trim(), vramTotalMb: g.mb })));
        expect(hw.vramTotalMb).toBe(gpus.reduce((s, g) => s + g.mb, 0));
      }),
    );
  });
});

describe("detectHardware", () => {
  it("is undefined when nvidia-smi is not installed", async () => {
    expect(await detectHardware({ command: "/nonexistent/nvidia-smi" })).toBeUndefined();
  });

  it("parses what the command prints", async () => {
    const hw = await detectHardware({ command: process.execPath, args: ["-e", "console.log('NVIDIA GeForce RTX 3090, 24576')"] });
    expect(hw).toMatchObject({ gpuName: "NVIDIA GeForce RTX 3090", vramTotalMb: 24576 });
  });

  it("garbage output → HardwareDetectionError", async () => {
    await expect(detectHardware({ command: process.execPath, args: ["-e", "console.log('garbage')"] })).rejects.toBeInstanceOf(HardwareDetectionError);
  });

  it("a failing nvidia-smi (driver not loaded) → HardwareDetectionError with its output", async () => {
    const error = await detectHardware({
      command: process.execPath,
      args: ["-e", "console.error('NVIDIA-SMI has failed'); process.exit(9)"],
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HardwareDetectionError);
    expect((error as HardwareDetectionError).output).toContain("NVIDIA-SMI has failed");
  });
});
