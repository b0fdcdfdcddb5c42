/**
 * The runner `forge-ts run` and `forge-ts runs resume|retry` drive: the backend from the flags
 * (or their FORGE_* variables) — `sim` plays the Oracle the workflow module exports, else a
 * schema-driven one — and the run store from `--store`, each read by the one function every
 * command shares.
 */
import { ContextManager } from "../context/context-manager.js";
import type { RunStore } from "../persistence/run-store.js";
import { WorkflowRunner } from "../runner.js";
import { runClients, type BackendFlags, type LoadedWorkflow } from "../cli-kit/backends.js";
import { positiveInt } from "../cli-kit/int-flag.js";
import { openStore, storeSpec } from "./store.js";

/** The flags of `run` / `runs` this file reads. */
export interface RunnerFlags {
  store?: string | undefined;
  backend?: string | undefined;
  model?: string | undefined;
  "base-url"?: string | undefined;
  mode?: string | undefined;
  think?: string | undefined;
  "api-key"?: string | undefined;
  timeout?: string | undefined;
  budget?: string | undefined;
  "max-iterations"?: string | undefined;
  "recommended-sampling"?: boolean | undefined;
}

const env = (name: string): string | undefined => (process.env[name] ? process.env[name] : undefined);

/** `--store`, else FORGE_STORE, else ./.forge. */
export function storeOf(values: Pick<RunnerFlags, "store">): Promise<{ store: RunStore; label: string }> {
  return openStore(storeSpec(values.store, ".forge"));
}

/** The backend a run gets: each flag, else its FORGE_* variable. */
export function backendSettings(values: RunnerFlags): { backend: string | undefined; flags: BackendFlags } {
  return {
    backend: values.backend ?? env("FORGE_BACKEND"),
    flags: {
      model: values.model ?? env("FORGE_MODEL"),
      baseUrl: values["base-url"] ?? env("FORGE_BASE_URL"),
      mode: values.mode ?? env("FORGE_MODE"),
      think: values.think ?? env("FORGE_THINK"),
      apiKey: values["api-key"],
      timeout: values.timeout ?? env("FORGE_TIMEOUT"),
      recommendedSampling: values["recommended-sampling"],
    },
  };
}

/**
 * A runner on the flags' backend with `store`; a real backend is asked whether it answers
 * first (the string returned says why not).
 */
export async function runnerFor(values: RunnerFlags, module: LoadedWorkflow, store: RunStore): Promise<WorkflowRunner | string> {
  const { backend, flags } = backendSettings(values);
  const { clientFor, problem } = await runClients(backend, flags, [module]);
  if (problem) return problem;
  return new WorkflowRunner({
    client: clientFor(module.workflow),
    contextManager: new ContextManager({ budgetTokens: positiveInt("budget", values.budget ?? env("FORGE_BUDGET"), 8192) }),
    maxIterations: positiveInt("max-iterations", values["max-iterations"], 10),
    store,
  });
}
