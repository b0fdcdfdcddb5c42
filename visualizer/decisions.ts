/**
 * The visualizer acts: a person's decision on a waiting run, taken from the page and recorded
 * with recordDecision in the visualizer's store. It only records: the run continues wherever
 * it is run (a runner's `proceed()`, `forge-ts runs resume`, a worker), which applies the
 * logged decision. And what the page shows of a waiting run: the requests of its latest
 * checkpoint, with decisions already in the log folded in.
 */
import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { ForgeError, type HumanDecisionError, type RunLockedError } from "../src/core/errors.js";
import { isPlainObject } from "../src/core/json-value.js";
import type { HumanDecisionEvent } from "../src/loop/human.js";
import type { WorkflowContext } from "../src/loop/context.js";
import { isRunId, type RunInfo, type RunStore } from "../src/persistence/run-store.js";
import { redactHumanRequest, redactionMapIn } from "../src/telemetry/redact-run.js";
import { recordDecision, requestsWithLog, type DecisionInput, type DecisionReceipt } from "../src/runner/decisions.js";
import { HttpProblem } from "./http-problem.js";
import type { HumanRequestView } from "./protocol.js";

const DECISION_TYPES = new Set(["approve", "reject", "answer"]);

/**
 * `POST /api/runs/:runId/decisions`: `{ callId?, decision }` → 200 with the receipt; then
 * `onRecorded` (the run list changed).
 *
 * @example
 * const [limit, record] = decisionRoute(store, () => pushRunList());
 * app.post("/api/runs/:runId/decisions", limit, record);
 */
export function decisionRoute(store: RunStore | undefined, onRecorded: () => void): [limit: MiddlewareHandler, record: MiddlewareHandler] {
  const limit = bodyLimit({
    maxSize: 1024 * 1024,
    onError: () => {
      throw new HttpProblem(413, "too_large", "a decision body is at most 1 MiB");
    },
  });
  const record: MiddlewareHandler = async function recordDecisionRoute(c) {
    const runId = c.req.param("runId") ?? "";
    if (!isRunId(runId)) throw new HttpProblem(400, "bad_run_id", `${JSON.stringify(runId)} is not a run id`);
    if (!store) throw new HttpProblem(404, "no_store", "this visualizer has no run store (start it with --store DIR)");
    // JSON only: a cross-site form cannot send it without a preflight this server never answers.
    if (!/^application\/json\b/i.test(c.req.header("content-type") ?? "")) throw new HttpProblem(400, "bad_content_type", "send the decision as JSON (content-type: application/json)");
    let body: unknown;
    try {
      body = await c.req.json();
    } catch (error) {
      throw new HttpProblem(400, "bad_json", `decision body is not JSON: ${(error as Error).message}`);
    }
    const input = checkedDecisionBody(body);
    if (!(await store.latest(runId))) throw new HttpProblem(404, "no_such_run", `the store has no run ${runId}`);
    const receipt = await decide(store, runId, input, Date.now());
    onRecorded();
    return c.json(receipt);
  };
  return [limit, record];
}

/** A decision body checked enough to hand to recordDecision (which checks the rest). */
export function checkedDecisionBody(body: unknown): DecisionInput {
  if (!isPlainObject(body)) throw new HttpProblem(400, "bad_body", 'expected {"callId": "...", "decision": {"type": "approve" | "reject" | "answer", ...}}');
  const { callId, decision } = body;
  if (callId !== undefined && (typeof callId !== "string" || callId === "")) throw new HttpProblem(400, "bad_body", "callId must be a non-empty string (the request's call id)");
  if (!isPlainObject(decision) || !DECISION_TYPES.has(decision.type as string)) {
    throw new HttpProblem(400, "bad_decision", `decision must be {"type": "approve" | "reject" | "answer", ...}, got ${JSON.stringify(decision) ?? "nothing"}`);
  }
  return { ...(callId !== undefined ? { callId } : {}), decision: decision as unknown as DecisionInput["decision"] };
}

/** Pauses before trying a held run again: a decider holds its lease for milliseconds. */
const LOCK_RETRY_MS = [25, 75, 200, 400];

/**
 * recordDecision as HTTP: the receipt, or an HttpProblem. A decision that cannot be taken
 * (decided already, wrong kind, edited args the tool's schema refuses) is a 409 naming the
 * problem; a malformed one (a reject without a reason) a 400. A run whose lease another decider
 * holds (two tabs, a double click) is tried again for under a second; one still held then (its
 * runner is driving it) is a 409 with the lease's remaining time.
 */
export async function decide(store: RunStore, runId: string, input: DecisionInput, now: number): Promise<DecisionReceipt> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await recordDecision(store, runId, input, now);
    } catch (error) {
      // By code, not instanceof: the checks survive a second copy of forge-ts in node_modules.
      const code = ForgeError.isInstance(error) ? error.code : undefined;
      if (code === "FORGE_RUN_LOCKED" && attempt < LOCK_RETRY_MS.length) {
        await new Promise((resolve) => setTimeout(resolve, LOCK_RETRY_MS[attempt]));
        continue;
      }
      if (code === "FORGE_HUMAN_DECISION") {
        const e = error as HumanDecisionError;
        throw new HttpProblem(e.problem === "invalid_decision" ? 400 : 409, e.code, e.message, { problem: e.problem, callId: e.callId });
      }
      if (code === "FORGE_RUN_LOCKED") {
        const e = error as RunLockedError;
        const seconds = Math.max(1, Math.ceil(e.expiresInMs / 1000));
        throw new HttpProblem(409, e.code, e.message, { expiresInMs: e.expiresInMs }, { "retry-after": String(seconds) });
      }
      throw error;
    }
  }
}

/**
 * The requests of a waiting run as the page shows them, read once per checkpoint (a decision
 * commits a new one, so the key changes with it); other runs have none.
 */
export function requestsReader(store: RunStore): (info: RunInfo) => Promise<HumanRequestView[] | undefined> {
  const cache = new Map<string, Promise<HumanRequestView[]>>();
  const read = async (runId: string): Promise<HumanRequestView[]> => {
    const last = await store.latest(runId);
    if (!last || last.status !== "waiting") return [];
    const logged: HumanDecisionEvent[] = [];
    for (const e of await store.events(runId)) if (e.type === "decision") logged.push({ type: "human.decide", callId: e.callId, decision: e.decision, at: e.at });
    const context = last.snapshot.context as unknown as WorkflowContext;
    // The page shows the calls waiting for a person with their tools' `redact` names masked.
    const redact = redactionMapIn(context);
    return requestsWithLog(context, logged).map(({ parameters: _schema, ...view }) => redactHumanRequest(view, redact));
  };
  return async (info) => {
    if (info.status !== "waiting") return undefined;
    const key = `${info.runId}@${info.seq}`;
    let requests = cache.get(key);
    if (!requests) {
      requests = read(info.runId);
      cache.set(key, requests);
      requests.catch(() => cache.delete(key));
      if (cache.size > 256) cache.delete(cache.keys().next().value!);
    }
    // A store that cannot be read now leaves the run without its requests, not the list empty.
    return requests.catch(() => undefined);
  };
}
