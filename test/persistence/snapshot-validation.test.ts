/**
 * resume() validates the whole persisted snapshot: every corruption ends as a resumed run or a
 * typed SnapshotError — never a hang (XState restoring a child it cannot finish) and never a raw
 * TypeError from a guard reading a field of the wrong type.
 */
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { SnapshotError } from "../../src/core/index.js";
import { assertRestorable } from "../../src/persistence/snapshot.js";
import { MACHINE_VERSION } from "../../src/loop/context.js";
import { loopWorkflow } from "../support/loop-fixtures.js";
import { resumeOutcome, snapshotsOfOneRun, type Outcome } from "./snapshot-fixtures.js";

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

let bases: [string, string][] = [];
beforeAll(async () => {
  bases = await snapshotsOfOneRun();
});
/** A fresh copy of the first snapshot taken in `state` (or the final one). */
const at = (state: string): Json => JSON.parse(bases.find(([s]) => s === state)![1]) as Json;

const { workflow } = loopWorkflow();
const refusal = (snapshot: unknown): string => {
  try {
    assertRestorable(snapshot, workflow);
  } catch (e) {
    expect(e).toBeInstanceOf(SnapshotError);
    return (e as Error).message;
  }
  throw new Error("expected a SnapshotError");
};
const safe = (o: Outcome) => o.kind === "resolved" || o.kind === "typed";

describe("the mutations that used to hang", () => {
  it.each(["done", "error", null])("children.infer.snapshot.status = %s", async (status) => {
    const snap = at("inferring");
    snap.children.infer.snapshot.status = status;
    expect(refusal(snap)).toMatch(/in-flight "infer" service is malformed: children\.infer\.snapshot\.status/);
    expect(await resumeOutcome(snap)).toEqual({ kind: "typed", code: "FORGE_SNAPSHOT" });
  });

  it.each([{}, [], 5, "validating", { executingTools: "selecting" }])("value = %j", async (value) => {
    const snap = at("inferring");
    snap.value = value;
    expect(refusal(snap)).toMatch(/value/);
    expect(await resumeOutcome(snap)).toEqual({ kind: "typed", code: "FORGE_SNAPSHOT" });
  });

  it('value "validating" with no child', () => {
    const snap = at("inferring");
    snap.value = "validating";
    snap.children = {};
    expect(refusal(snap)).toMatch(/value/);
  });

  it('value "done" with status "active"', () => {
    const snap = at("inferring");
    snap.value = "done";
    snap.children = {};
    expect(refusal(snap)).toMatch(/status "active" contradicts its state "done"/);
  });

  it("a child under another id than its service (its done event would go unheard)", () => {
    const snap = at("inferring");
    snap.children = { elsewhere: snap.children.infer };
    expect(refusal(snap)).toMatch(/child "elsewhere" \(service "infer"\) does not belong to state "inferring"/);
  });

  it("a tool in flight that is not the batch's next call", () => {
    const snap = at("executingTools.running");
    snap.children.executeTool.snapshot.input.tool = "finish";
    expect(refusal(snap)).toMatch(/does not match the batch's next call \(tool differ/);
  });

  it("history states the machine does not have", () => {
    const snap = at("inferring");
    snap.historyValue = { "workflow.inferring": [] };
    expect(refusal(snap)).toMatch(/historyValue/);
  });

  it("a finished snapshot that contradicts itself", () => {
    const done = at("final");
    delete done.context.terminal;
    expect(refusal(done)).toMatch(/state "done" but has no terminal result/);
    const failed = at("final");
    failed.value = "failed";
    expect(refusal(failed)).toMatch(/state "failed" but carries no error/);
  });
});

describe("wrong types are SnapshotErrors with the field named, not TypeErrors", () => {
  it("machineVersion as a string says the type is wrong", () => {
    const snap = at("inferring");
    snap.context.machineVersion = String(MACHINE_VERSION);
    const message = refusal(snap);
    expect(message).toContain(`machineVersion has the wrong type: expected the number ${MACHINE_VERSION}, got string "${MACHINE_VERSION}"`);
    expect(message).not.toMatch(/written by machine version/);
  });

  it("a deleted messages array", async () => {
    const snap = at("compacting.running");
    delete snap.context.messages;
    expect(refusal(snap)).toMatch(/context\.messages/);
    expect(await resumeOutcome(snap)).toEqual({ kind: "typed", code: "FORGE_SNAPSHOT" });
  });

  it("a value that is not JSON at all", () => {
    const snap = at("inferring");
    snap.context.usage.inputTokens = 10n;
    expect(refusal(snap)).toMatch(/not plain JSON: a bigint at context\.usage\.inputTokens/);
  });

  it("every single-field corruption of the context (each field deleted or given a wrong type)", async () => {
    const corruptions: unknown[] = ["DELETE", null, 5, "x", [], {}];
    const states = ["compacting.running", "inferring", "executingTools.running", "final"];
    const untyped: string[] = [];
    let cases = 0;
    for (const state of states) {
      for (const field of Object.keys(at(state).context)) {
        for (const value of corruptions) {
          const snap = at(state);
          if (value === "DELETE") delete snap.context[field];
          else snap.context[field] = structuredClone(value);
          const outcome = await resumeOutcome(snap);
          cases++;
          if (!safe(outcome)) untyped.push(`${state} context.${field} = ${JSON.stringify(value)} → ${outcome.kind}`);
        }
      }
    }
    expect(cases).toBeGreaterThanOrEqual(120);
    expect(untyped).toEqual([]);
  }, 600_000); // CPU-bound: a deadline for a hang, not a speed test
});

/** Every path into a JSON value (the root excluded). */
function pathsOf(value: unknown, prefix: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  if (prefix.length > 0) out.push(prefix);
  if (value && typeof value === "object") {
    for (const [k, child] of Object.entries(value)) pathsOf(child, [...prefix, Array.isArray(value) ? Number(k) : k], out);
  }
  return out;
}

const REPLACEMENTS: unknown[] = [
  "DELETE", null, {}, [], 5, -1, 1.5, 1e308, "", "x", true, "1", "done", "error", "active", "validating",
  "$context.messages", { executingTools: "selecting" }, { executingTools: "running" }, [{}],
];

describe("property: any mutation of any snapshot resumes or is refused, promptly", () => {
  it("2,000 generated mutations", async () => {
    const outcomes = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(fc.nat(), fc.nat(), fc.constantFrom(...REPLACEMENTS), async (baseIndex, pathIndex, replacement) => {
        const snap = JSON.parse(bases[baseIndex % bases.length]![1]) as Json;
        const paths = pathsOf(snap);
        const path = paths[pathIndex % paths.length]!;
        let parent: Json = snap;
        for (const key of path.slice(0, -1)) parent = parent[key];
        const key = path.at(-1)!;
        if (replacement !== "DELETE") parent[key] = structuredClone(replacement);
        else if (Array.isArray(parent)) parent.splice(key as number, 1);
        else delete parent[key];
        const outcome = await resumeOutcome(snap);
        outcomes.set(outcome.kind === "typed" ? outcome.code : outcome.kind, (outcomes.get(outcome.kind === "typed" ? outcome.code : outcome.kind) ?? 0) + 1);
        expect(safe(outcome), `${path.join(".")} = ${JSON.stringify(replacement)} → ${JSON.stringify(outcome)}`).toBe(true);
      }),
      { numRuns: 2000 },
    );
    // both sides of the property were exercised
    expect(outcomes.get("FORGE_SNAPSHOT")).toBeGreaterThan(100);
    expect(outcomes.get("resolved")).toBeGreaterThan(100);
  }, 600_000); // CPU-bound (about 5 s on an idle core; it hit 30 s beside a second suite): a deadline for a hang, not a speed test
});

describe("the snapshot must belong to this workflow's shape", () => {
  it("terminal tools that differ from the workflow's are refused", () => {
    const snap = at("inferring");
    snap.context.run.terminalTools = ["fetch_a"];
    expect(refusal(snap)).toMatch(/terminal tools \[fetch_a\], workflow "loop-test" on \[finish\]/);
  });

  it("a tool the workflow lacks is refused", () => {
    const snap = at("inferring");
    snap.context.run.toolNames = [...snap.context.run.toolNames, "teleport"];
    expect(refusal(snap)).toMatch(/lacks tools the snapshot used: teleport/);
  });
});
