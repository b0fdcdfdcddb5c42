import { describe, expect, it } from "vitest";
import { buildLaunchCommand } from "../../src/server/launch-command.js";

const base = { host: "127.0.0.1", port: 8080, ggufPath: "/m/Qwen3-8B-Q4_K_M.gguf" };

describe("buildLaunchCommand", () => {
  it("llama-server with every option", () => {
    expect(
      buildLaunchCommand({ ...base, backend: "llamaserver", ctxOverride: 16384, cacheTypeK: "q8_0", cacheTypeV: "q4_0", nSlots: 4, extraFlags: ["--flash-attn", "on"] }),
    ).toEqual({
      command: "llama-server",
      args: ["-m", "/m/Qwen3-8B-Q4_K_M.gguf", "--host", "127.0.0.1", "--port", "8080", "-ngl", "999", "--jinja", "-c", "16384", "--cache-type-k", "q8_0", "--cache-type-v", "q4_0", "--parallel", "4", "--flash-attn", "on"],
    });
  });

  it("prompt mode has no --jinja; binary overrides the executable", () => {
    const cmd = buildLaunchCommand({ ...base, backend: "llamaserver", mode: "prompt", binary: "/opt/llama/llama-server" });
    expect(cmd.command).toBe("/opt/llama/llama-server");
    expect(cmd.args).not.toContain("--jinja");
  });

  it("llamafile runs a .llamafile as its own executable, or the runtime with -m", () => {
    expect(buildLaunchCommand({ ...base, backend: "llamafile", ggufPath: "/m/Mistral-Nemo.Q4_K_M.llamafile" })).toEqual({
      command: "/m/Mistral-Nemo.Q4_K_M.llamafile",
      args: ["--server", "--nobrowser", "--host", "127.0.0.1", "--port", "8080", "-ngl", "999", "--jinja"],
    });
    expect(buildLaunchCommand({ ...base, backend: "llamafile" }).args.slice(0, 4)).toEqual(["--server", "--nobrowser", "-m", base.ggufPath]);
  });

  it("rejects a missing model path and bad numbers", () => {
    expect(() => buildLaunchCommand({ ...base, backend: "llamaserver", ggufPath: "" })).toThrow(/ggufPath/);
    expect(() => buildLaunchCommand({ ...base, backend: "llamaserver", ctxOverride: 0 })).toThrow(/ctxOverride/);
    expect(() => buildLaunchCommand({ ...base, backend: "llamaserver", nSlots: 1.5 })).toThrow(/nSlots/);
  });
});
