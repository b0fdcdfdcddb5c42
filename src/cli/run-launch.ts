/**
 * A run's launch record (RunLaunch: its workflow module, backend and model) on the command line:
 * what `forge-ts run` and the demo record in the run's start event, and what `runs
 * resume|retry|replay` take from it for each flag not given. The printed follow-up commands
 * (resumeCommand) leave out what the record says, so they need no placeholders.
 */
import path from "node:path";
import { StoreError } from "../core/errors.js";
import { withoutCredentials } from "../core/redact.js";
import type { RunLaunch, RunStore } from "../persistence/run-store.js";
import { assertRunLaunch } from "../runner/options.js";
import { simProfile, type BackendFlags } from "../cli-kit/backends.js";
import { recordedFlag, type HintFlags } from "../cli-kit/resume-command.js";

/**
 * The launch of a run of the module at `modulePath` on `backend` with these settings (after
 * the backend accepted them): the module as an absolute path; for `sim` only its profile.
 *
 * @example launchOf("./wf.mjs", "sim", {}); // { module: "/home/me/wf.mjs", backend: "sim", model: "clean" }
 */
export function launchOf(modulePath: string, backend: string, f: BackendFlags): RunLaunch {
  const module = path.resolve(modulePath);
  if (backend === "sim") return { module, backend, model: simProfile(f.model, "clean") };
  return {
    module,
    backend,
    model: f.model!, // runClients refused a real backend without one
    ...(f.baseUrl ? { baseUrl: withoutCredentials(f.baseUrl) } : {}),
    ...(f.mode ? { mode: f.mode } : {}),
    ...(f.think !== undefined ? { think: f.think === "true" } : {}),
    ...(f.recommendedSampling ? { recommendedSampling: true as const } : {}),
  };
}

/**
 * The launch recorded in the start event of run `runId`; a fork's is the one of the run it was
 * forked from (followed back to a start). Undefined for a run started before runs recorded it,
 * or not from the command line.
 */
export async function recordedLaunch(store: RunStore, runId: string): Promise<RunLaunch | undefined> {
  const seen = new Set<string>();
  for (let id = runId; !seen.has(id); ) {
    seen.add(id);
    const first = (await store.events(id))[0];
    if (first?.type === "fork") {
      id = first.from.runId;
      continue;
    }
    if (first?.type !== "start" || first.launch === undefined) return undefined;
    try {
      assertRunLaunch(first.launch);
    } catch (error) {
      throw new StoreError(`run ${id}'s start event holds a launch record forge-ts cannot read: ${(error as Error).message}`, id, "events", { cause: error });
    }
    return first.launch;
  }
  return undefined;
}

/** The flags `runs resume|retry|replay` read, with what the launch recorded for each one not given. */
export type LaunchFlags = Pick<HintFlags, "workflow" | "backend" | "model" | "base-url" | "mode" | "think" | "recommended-sampling">;

/**
 * `values` with each launch flag not given taken from the record (recordedFlag: the backend's
 * settings only while the backend is the recorded one). A given flag wins, and the record wins
 * over the FORGE_* variables, which are read after this.
 *
 * @example withLaunch({ store: "s" }, launch); // { store: "s", workflow: launch.module, backend: launch.backend, model: launch.model }
 */
export function withLaunch<T extends LaunchFlags>(values: T, launch: RunLaunch | undefined): T {
  if (!launch) return values;
  const fill = (name: "workflow" | "backend" | "model" | "base-url" | "mode" | "think") => {
    const value = values[name] ?? recordedFlag(launch, name, values.backend);
    return value !== undefined ? { [name]: value } : {};
  };
  const sampling = values["recommended-sampling"] || recordedFlag(launch, "recommended-sampling", values.backend) !== undefined;
  return {
    ...values,
    ...fill("workflow"),
    ...fill("backend"),
    ...fill("model"),
    ...fill("base-url"),
    ...fill("mode"),
    ...fill("think"),
    ...(sampling ? { "recommended-sampling": true } : {}),
  };
}
