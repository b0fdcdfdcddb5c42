/**
 * The exact argv for a llama-server / llamafile launch (pure, so the flags are testable and
 * the reuse check can compare launches).
 */
import { InvalidArgumentError } from "../core/errors.js";

export type ManagedBackend = "llamaserver" | "llamafile";

export interface LaunchSpec {
  backend: ManagedBackend;
  /** Executable; defaults: `llama-server`, `llamafile`, or the `.llamafile` itself. */
  binary?: string;
  ggufPath: string;
  host: string;
  port: number;
  /** "prompt" leaves out `--jinja` (the tool prompt is injected instead of the chat template's). */
  mode?: "native" | "prompt" | "auto";
  ctxOverride?: number;
  cacheTypeK?: string;
  cacheTypeV?: string;
  nSlots?: number;
  extraFlags?: readonly string[];
}

export interface LaunchCommand {
  command: string;
  args: string[];
}

const positiveInt = (name: string, value: number | undefined): void => {
  if (value !== undefined && (!Number.isInteger(value) || value <= 0)) {
    throw new InvalidArgumentError(name, `must be a positive integer, got ${value}`);
  }
};

/**
 * Build the launch command.
 *
 * @example
 * buildLaunchCommand({ backend: "llamaserver", ggufPath: "/m/Qwen3-8B-Q4_K_M.gguf", host: "127.0.0.1", port: 8080, ctxOverride: 16384 });
 * // { command: "llama-server", args: ["-m", "/m/Qwen3-8B-Q4_K_M.gguf", "--host", "127.0.0.1", "--port", "8080", "-ngl", "999", "--jinja", "-c", "16384"] }
 */
export function buildLaunchCommand(spec: LaunchSpec): LaunchCommand {
  if (typeof spec.ggufPath !== "string" || spec.ggufPath.length === 0) {
    throw new InvalidArgumentError("ggufPath", `backend "${spec.backend}" needs the model file path`);
  }
  positiveInt("ctxOverride", spec.ctxOverride);
  positiveInt("nSlots", spec.nSlots);
  const isLlamafileBinary = spec.backend === "llamafile" && spec.ggufPath.endsWith(".llamafile");
  const command = spec.binary ?? (spec.backend === "llamaserver" ? "llama-server" : isLlamafileBinary ? spec.ggufPath : "llamafile");
  const args: string[] = [];
  if (spec.backend === "llamafile") args.push("--server", "--nobrowser");
  // A self-contained .llamafile run as its own executable already carries its weights.
  if (!(isLlamafileBinary && command === spec.ggufPath)) args.push("-m", spec.ggufPath);
  args.push("--host", spec.host, "--port", String(spec.port), "-ngl", "999");
  if ((spec.mode ?? "native") !== "prompt") args.push("--jinja");
  if (spec.ctxOverride !== undefined) args.push("-c", String(spec.ctxOverride));
  if (spec.cacheTypeK !== undefined) args.push("--cache-type-k", spec.cacheTypeK);
  if (spec.cacheTypeV !== undefined) args.push("--cache-type-v", spec.cacheTypeV);
  if (spec.nSlots !== undefined) args.push("--parallel", String(spec.nSlots));
  args.push(...(spec.extraFlags ?? []));
  return { command, args };
}
