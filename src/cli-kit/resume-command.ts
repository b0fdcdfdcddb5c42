/**
 * The command line that continues a run, as every command that stops one prints it (runs,
 * Ctrl-C, eval batches): shared below src/cli and eval so neither imports the other for it.
 */
import path from "node:path";
import type { RunLaunch } from "../persistence/run-store.js";
import { cliCommand, shellWord } from "./cli-command.js";

export { shellWord };

/** The flags the hints repeat, as the user gave them (a store only when named on the command line). */
export interface HintFlags {
  store?: string | undefined;
  workflow?: string | undefined;
  backend?: string | undefined;
  model?: string | undefined;
  "base-url"?: string | undefined;
  mode?: string | undefined;
  think?: string | undefined;
  "recommended-sampling"?: boolean | undefined;
  /** The MCP servers a module's createWorkflow takes its tools from: not recorded (a command may hold a secret), so repeated as given. */
  mcp?: readonly string[] | undefined;
  "mcp-url"?: readonly string[] | undefined;
  "mcp-config"?: string | undefined;
  /** What the run's start event recorded of its launch: `runs resume|retry` default to it, so a hint need not repeat it. */
  launch?: RunLaunch | undefined;
}

type ValueFlag = "workflow" | "backend" | "model" | "base-url" | "mode" | "think";

/**
 * The value `runs resume|retry` take for a flag that is not given: the run's recorded launch.
 * The backend's own settings (model, URL, mode, thinking, sampling) only when the backend is
 * the recorded one. One rule for the hints and for the commands that follow them.
 *
 * @example recordedFlag(launch, "model", "ollama"); // launch.model when launch.backend is "ollama"
 */
export function recordedFlag(launch: RunLaunch | undefined, name: ValueFlag | "recommended-sampling", backend: string | undefined): string | undefined {
  if (!launch) return undefined;
  if (name === "workflow") return launch.module;
  if (name === "backend") return launch.backend;
  if (backend !== undefined && backend !== launch.backend) return undefined;
  if (name === "model") return launch.model;
  if (name === "base-url") return launch.baseUrl;
  if (name === "mode") return launch.mode;
  if (name === "think") return launch.think?.toString();
  return launch.recommendedSampling ? "true" : undefined;
}

export const storeFlag = (f: HintFlags): string => (f.store !== undefined ? ` --store ${shellWord(f.store)}` : "");

/**
 * The command that continues a run (`resume`; `retry` for a cancelled one): each flag given
 * that the run's launch record does not already say, and placeholders for a run that has no
 * record (started before runs recorded it, or not from the command line).
 *
 * @example resumeCommand("r1", { store: ".forge", launch }); // "forge-ts runs resume r1 --store .forge"
 */
export function resumeCommand(runId: string, f: HintFlags, sub: "resume" | "retry" = "resume"): string {
  const flag = (name: ValueFlag, placeholder?: string) => {
    const given = f[name];
    const recorded = recordedFlag(f.launch, name, f.backend);
    const same = given !== undefined && (name === "workflow" ? path.resolve(given) === recorded : given === recorded);
    if (given !== undefined) return same ? "" : ` --${name} ${shellWord(given)}`;
    return recorded === undefined && placeholder ? ` --${name} ${placeholder}` : "";
  };
  const sampling = f["recommended-sampling"] && recordedFlag(f.launch, "recommended-sampling", f.backend) === undefined ? " --recommended-sampling" : "";
  const servers = [...(f.mcp ?? []).map((c) => ` --mcp ${shellWord(c)}`), ...(f["mcp-url"] ?? []).map((u) => ` --mcp-url ${shellWord(u)}`), f["mcp-config"] !== undefined ? ` --mcp-config ${shellWord(f["mcp-config"])}` : ""].join("");
  const model = flag("model", f.backend === "sim" ? undefined : "<name>");
  return `${cliCommand()} runs ${sub} ${shellWord(runId)}${flag("workflow", "<module>")}${flag("backend", "<name>")}${model}${flag("base-url")}${flag("mode")}${flag("think")}${sampling}${servers}${storeFlag(f)}`;
}
