/**
 * The runner `forge-ts run` and `forge-ts runs resume|retry` drive: the backend from the flags
 * (or their FORGE_* variables) — `sim` plays the Oracle the workflow module exports, else a
 * schema-driven one — and the run store from `--store`, each read by the one function every
 * command shares.
 */
import { ContextManager } from "../context/context-manager.js";
import type { RunStore } from "../persistence/run-store.js";
import { WorkflowRunner } from "../runner.js";
import { runClients, type LoadedWorkflow } from "../cli-kit/backends.js";
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
}

const env = (name: string): string | undefined => (process.env[name] ? process.env[name] : undefined);

/** `--store`, else FORGE_STORE, else ./.forge. */
export function storeOf(values: Pick<RunnerFlags, "store">): Promise<{ store: RunStore; label: string }> {
  return openStore(storeSpec(values.store, ".forge"));
}

/**
 * A runner on the flags' backend with the store; a real backend is asked whether it answers
 * first (the string returned says why not). `opened` learns the store's label (a postgres URL's
 * password hidden) for the hints a waiting or interrupted run prints.
 */
export async function runnerFor(values: RunnerFlags, module: LoadedWorkflow, opened?: (label: string) => void): Promise<WorkflowRunner | string> {
  const { clientFor, problem } = await runClients(
    values.backend ?? env("FORGE_BACKEND"),
    {
      model: values.model ?? env("FORGE_MODEL"),
      baseUrl: values["base-url"] ?? env("FORGE_BASE_URL"),
      mode: values.mode ?? env("FORGE_MODE"),
      think: values.think ?? env("FORGE_THINK"),
      apiKey: values["api-key"],
      timeout: values.timeout ?? env("FORGE_TIMEOUT"),
    },
    [module],
  );
  if (problem) return problem;
  const { store, label } = await storeOf(values);
  opened?.(label);
  return new WorkflowRunner({
    client: clientFor(module.workflow),
    contextManager: new ContextManager({ budgetTokens: positiveInt("budget", values.budget ?? env("FORGE_BUDGET"), 8192) }),
    maxIterations: positiveInt("max-iterations", values["max-iterations"], 10),
    store,
  });
}
