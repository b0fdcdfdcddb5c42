/**
 * GPU detection through nvidia-smi (total VRAM only: a stable number that does not move with
 * allocations). ServerManager uses it for Ollama's VRAM-tier budget.
 */
import { execFile } from "node:child_process";
import { HardwareDetectionError } from "../core/errors.js";

export interface GpuInfo {
  name: string;
  vramTotalMb: number;
}

/** What detectHardware found. Plain JSON so it can be logged and persisted. */
export interface HardwareProfile {
  /** The first GPU's name (nvidia-smi's index 0). */
  gpuName: string;
  /** Total VRAM summed over every GPU: Ollama sizes its default context on the total. */
  vramTotalMb: number;
  vramTotalGb: number;
  gpus: GpuInfo[];
}

export interface DetectHardwareOptions {
  /** Executable to run; tests point this at a fixture. */
  command?: string;
  args?: readonly string[];
  timeoutMs?: number;
}

export const NVIDIA_SMI_ARGS: readonly string[] = [
  "--query-gpu=name,memory.total",
  "--format=csv,noheader,nounits",
];

/**
 * Parse `nvidia-smi --query-gpu=name,memory.total --format=csv,noheader,nounits` output.
 * The name may contain spaces and even commas, so the VRAM is taken after the last comma.
 *
 * @example
 * parseNvidiaSmi("NVIDIA GeForce RTX 4090, 24564\n"); // { gpuName: "NVIDIA GeForce RTX 4090", vramTotalMb: 24564, ... }
 */
export function parseNvidiaSmi(output: string): HardwareProfile {
  const lines = output
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l.length > 0);
  if (lines.length === 0) throw new HardwareDetectionError("nvidia-smi printed no GPU lines", output);
  const gpus = lines.map((line): GpuInfo => {
    const comma = line.lastIndexOf(",");
    if (comma <= 0) throw new HardwareDetectionError(`Expected "name, memory" in nvidia-smi line ${JSON.stringify(line)}`, output);
    const name = line.slice(0, comma).trim();
    const memory = line.slice(comma + 1).trim();
    if (!/^\d+$/.test(memory)) {
      throw new HardwareDetectionError(`nvidia-smi memory.total ${JSON.stringify(memory)} is not an integer MiB value`, output);
    }
    const vramTotalMb = Number(memory);
    if (name.length === 0 || vramTotalMb <= 0) {
      throw new HardwareDetectionError(`Unusable nvidia-smi line ${JSON.stringify(line)}`, output);
    }
    return { name, vramTotalMb };
  });
  const vramTotalMb = gpus.reduce((sum, g) => sum + g.vramTotalMb, 0);
  return { gpuName: gpus[0]!.name, vramTotalMb, vramTotalGb: vramTotalMb / 1024, gpus };
}

/**
 * Detect NVIDIA GPUs. `undefined` when nvidia-smi is not installed (no NVIDIA GPU to use);
 * `HardwareDetectionError` when it runs but fails or prints something unparseable — a broken
 * driver should be seen, not mistaken for "no GPU".
 *
 * @example
 * const hw = await detectHardware();
 * if (hw) console.log(`${hw.gpuName}: ${hw.vramTotalGb.toFixed(1)} GB`);
 */
export function detectHardware(options: DetectHardwareOptions = {}): Promise<HardwareProfile | undefined> {
  const command = options.command ?? "nvidia-smi";
  const args = [...(options.args ?? NVIDIA_SMI_ARGS)];
  return new Promise((resolve, reject) => {
    execFile(command, args, { timeout: options.timeoutMs ?? 10_000, encoding: "utf8" }, (error, stdout, stderr) => {
      if (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") {
          resolve(undefined);
          return;
        }
        reject(new HardwareDetectionError(`${command} failed: ${error.message}`, `${stdout}${stderr}`, { cause: error }));
        return;
      }
      try {
        resolve(parseNvidiaSmi(stdout));
      } catch (e) {
        reject(e);
      }
    });
  });
}
