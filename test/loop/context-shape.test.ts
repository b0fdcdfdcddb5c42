/**
 * The machine context keeps one set of top-level keys, at most 16, for the whole run and after
 * a resume. XState copies the context with Object.assign on every assign; in V8 a copy of an
 * object with many more keys, or one that gains keys, becomes a dictionary-mode object, and
 * every later copy and guard read is then several times slower (measured: about a fifth of
 * the loop's per-iteration cost; `npm run bench -- runner`).
 */
import { describe, expect, it } from "vitest";
import { ContextManager, NoCompact, WorkflowRunner } from "../../src/index.js";
import type { PersistedRun } from "../../src/persistence/snapshot.js";
import { call, loopWorkflow, PolicyClient, scriptThenCorrect, text } from "../support/loop-fixtures.js";

const MAX_KEYS = 16;
const VARS = { promptVars: { company: "Acme" } };

function runner(script: Parameters<typeof scriptThenCorrect>[0]) {
  return new WorkflowRunner({
    client: new PolicyClient(scriptThenCorrect(script)),
    contextManager: new ContextManager({ budgetTokens: 100_000, strategy: new NoCompact() }),
  });
}

/** Every distinct key list the context showed while the run went through retries, errors and a finish. */
async function keySets(r: WorkflowRunner, start: () => Promise<unknown>): Promise<Set<string>> {
  const seen = new Set<string>();
  const result = start();
  const record = (ctx: object) => seen.add(Object.keys(ctx).sort().join(","));
  record(r.actor!.getSnapshot().context);
  r.actor!.subscribe((s) => record(s.context));
  await result;
  record(r.actor!.getSnapshot().context);
  return seen;
}

describe("workflow context shape", () => {
  it("has the same ≤16 keys from the first state to the last, through retries and tool errors", async () => {
    const { workflow } = loopWorkflow();
    const r = runner([text("no call yet"), call("nope"), call("fetch_a", { mode: "throw" })]);
    const sets = await keySets(r, () => r.run(workflow, "go", VARS));
    expect(sets.size).toBe(1);
    const keys = [...sets][0]!.split(",");
    expect(keys.length).toBeLessThanOrEqual(MAX_KEYS);
    expect(r.lastRunStats?.outcome).toBe("done");
  });

  it("keeps that key set after a resume from a JSON snapshot (which drops unset fields)", async () => {
    const { workflow } = loopWorkflow();
    const first = runner([]);
    const fresh = await keySets(first, () => first.run(workflow, "go", VARS));
    let snapshot: PersistedRun | undefined;
    const second: WorkflowRunner = new WorkflowRunner({
      ...runner([]).options,
      onStateChange: (state) => {
        if (state === "inferring" && snapshot === undefined) snapshot = JSON.parse(JSON.stringify(second.snapshot()));
      },
    });
    await second.run(workflow, "go", VARS);
    expect(Object.keys(snapshot!.context).length).toBeLessThan(MAX_KEYS);
    const third = runner([]);
    const resumed = await keySets(third, () => third.resume(snapshot!, workflow));
    expect([...resumed]).toEqual([...fresh]);
  });
});
