/**
 * Snapshots of one messy run (a retry, a tool error, a parallel batch) taken at every state
 * it entered, as JSON text: the base material the validation tests corrupt.
 */
import { ForgeError } from "../../src/core/index.js";
import type { PersistedRun } from "../../src/persistence/snapshot.js";
import { WorkflowRunner } from "../../src/runner.js";
import { call, calls, compactingEveryIteration, loopWorkflow, PolicyClient, scriptThenCorrect, text } from "../support/loop-fixtures.js";

export const vars = { promptVars: { company: "Acme" } };
const script = [text("thinking"), call("fetch_a", { mode: "throw", n: 1 }), calls(["fetch_a", { n: 1 }], ["extra", { n: 2 }])];

export const freshRunner = () =>
  new WorkflowRunner({
    client: new PolicyClient(scriptThenCorrect(script)),
    contextManager: compactingEveryIteration(),
  });

/** [state, snapshot JSON] at each state entry of the run, the final one included. */
export async function snapshotsOfOneRun(): Promise<[string, string][]> {
  const { workflow } = loopWorkflow();
  const out: [string, string][] = [];
  const runner: WorkflowRunner = new WorkflowRunner({
    client: new PolicyClient(scriptThenCorrect(script)),
    contextManager: compactingEveryIteration(),
    onStateChange: (state) => out.push([state, JSON.stringify(runner.snapshot())]),
  });
  await runner.run(workflow, "go", { ...vars, runId: "fixed-run" });
  out.push(["final", JSON.stringify(runner.snapshot())]);
  return out;
}

export type Outcome = { kind: "resolved" } | { kind: "typed"; code: string } | { kind: "untyped"; error: unknown } | { kind: "hung" };

/** Resume `snapshot` and classify how it ended; "hung" after `ms`. */
export async function resumeOutcome(snapshot: unknown, ms = 2_000): Promise<Outcome> {
  const { workflow } = loopWorkflow();
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hung = new Promise<Outcome>((resolve) => (timer = setTimeout(() => resolve({ kind: "hung" }), ms)));
  const settled = freshRunner()
    .resume(snapshot as PersistedRun, workflow, { signal: controller.signal })
    .then(
      (): Outcome => ({ kind: "resolved" }),
      (error: unknown): Outcome => (ForgeError.isInstance(error) ? { kind: "typed", code: error.code } : { kind: "untyped", error }),
    );
  try {
    return await Promise.race([settled, hung]);
  } finally {
    clearTimeout(timer);
    controller.abort(); // a hung resume must not keep running into the next case
  }
}
