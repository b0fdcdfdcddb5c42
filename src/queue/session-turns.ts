/**
 * A session's turns in Redis, through the scripts of session-scripts.ts: numbering (atomic, once
 * per run), admission (run now, fail fast, or park until its turn) and release (a turn ended in
 * any form: the next is let in). Parked jobs are woken by the release that lets them in, never
 * by polling.
 */
import type { Queue } from "bullmq";
import type { Redis } from "ioredis";
import { isCancelled } from "./run-records.js";
import { SESSION_SCRIPTS, SESSION_TTL_MS, sessionKeys, type SessionScript } from "./session-scripts.js";

/** How a turn ended: failures name the turn that failed first (an earlier one, when this turn failed because of it). */
export type TurnEnd = { kind: "done" } | { kind: "failed" | "cancelled"; root?: { runId: string; turn: number } };

/** A run of a session's turn, as the scripts name it. */
export interface TurnRun {
  runId: string;
  workflow: string;
}

export type Admission =
  | { verdict: "run"; turn: number }
  | { verdict: "fail"; turn: number; because: { kind: "failed" | "cancelled"; runId: string; turn: number }; parked: TurnRun | undefined }
  /** The turn had already ended (`outcome` as recorded, when still known) when this job got to it. */
  | { verdict: "past"; turn: number; outcome: { kind: "failed" | "cancelled"; runId: string; turn: number } | "done" | undefined }
  | { verdict: "wait"; turn: number; next: number; blocker: TurnRun | undefined };

type Script = (...args: (string | number)[]) => Promise<unknown>;

export class SessionTurns {
  readonly #scripts: Record<SessionScript, Script>;

  constructor(readonly client: Redis) {
    const scripts = {} as Record<SessionScript, Script>;
    for (const [name, lua] of Object.entries(SESSION_SCRIPTS) as [SessionScript, string][]) {
      if (typeof (client as unknown as Record<string, unknown>)[name] !== "function") client.defineCommand(name, { numberOfKeys: 5, lua });
      const command = (client as unknown as Record<string, Script>)[name]!;
      scripts[name] = (...args) => command.call(client, ...args);
    }
    this.#scripts = scripts;
  }

  /** The run's turn: numbered now, or the number it already has. */
  async register(sessionId: string, run: TurnRun, ttlMs = SESSION_TTL_MS): Promise<number> {
    return Number(await this.#scripts.forgeRegisterTurn(...sessionKeys(sessionId), run.runId, run.workflow, ttlMs));
  }

  /** Whether the run's turn may run; a "wait" verdict has recorded the job as parked. */
  async admit(sessionId: string, run: TurnRun, afterFailure: "fail" | "continue"): Promise<Admission> {
    const [verdict, turn, a, b] = (await this.#scripts.forgeAdmitTurn(...sessionKeys(sessionId), run.runId, run.workflow, afterFailure, SESSION_TTL_MS)) as [string, number, unknown, unknown];
    if (verdict === "run") return { verdict, turn: Number(turn) };
    if (verdict === "fail") return { verdict, turn: Number(turn), because: parseFailure(String(a)), parked: parseRun(String(b ?? "")) };
    if (verdict === "past") {
      const outcome = String(a ?? "");
      return { verdict, turn: Number(turn), outcome: outcome === "" ? undefined : outcome === "done" ? "done" : parseFailure(outcome) };
    }
    return { verdict: "wait", turn: Number(turn), next: Number(a), blocker: parseRun(String(b)) };
  }

  /** After parking: whether a release let the turn in meanwhile (then it must promote itself). */
  async admitted(sessionId: string, turn: number): Promise<boolean> {
    return Number(await this.#scripts.forgeTurnAdmitted(...sessionKeys(sessionId), turn)) === 1;
  }

  /** Record the turn's end (idempotent) and let the next in: returns the job parked for it, if any. */
  async release(sessionId: string, run: TurnRun, end: TurnEnd): Promise<{ turn: number; next: number; parked: TurnRun | undefined }> {
    const root = end.kind === "done" ? undefined : end.root;
    const [turn, next, parked] = (await this.#scripts.forgeReleaseTurn(
      ...sessionKeys(sessionId),
      run.runId,
      run.workflow,
      end.kind,
      root?.runId ?? "",
      root?.turn ?? "",
      SESSION_TTL_MS,
    )) as [number, number, string];
    return { turn: Number(turn), next: Number(next), parked: parseRun(parked) };
  }
}

/**
 * Wake a parked job: it runs as soon as a worker is free. A job not yet delayed (still on its
 * way to being parked) refuses; it re-checks its admission after parking and promotes itself.
 */
export async function promoteParked(queueFor: (workflow: string) => Queue, parked: TurnRun | undefined): Promise<void> {
  if (!parked) return;
  const job = await queueFor(parked.workflow).getJob(parked.runId);
  await job?.promote().catch(() => undefined);
}

/**
 * The turn blocking a parked one may have ended without its release: its worker died between
 * finishing the job and releasing the turn, or a cancel removed the job and its caller died.
 * Its job's state tells; the turn is released for it (releasing twice is harmless). Returns
 * whether it was released.
 */
export async function releaseIfEnded(turns: SessionTurns, queueFor: (workflow: string) => Queue, sessionId: string, blocker: TurnRun): Promise<boolean> {
  const queue = queueFor(blocker.workflow);
  const state = await queue.getJobState(blocker.runId);
  if (state !== "completed" && state !== "failed" && state !== "unknown") return false;
  // A run parked for a person completed its job but not its turn: it is not over.
  if (state === "completed" && ((await queue.getJob(blocker.runId))?.returnvalue as { waiting?: unknown } | undefined)?.waiting) return false;
  const kind = state === "completed" ? "done" : (await isCancelled(turns.client, blocker.runId)) ? "cancelled" : "failed";
  await promoteParked(queueFor, (await turns.release(sessionId, blocker, { kind })).parked);
  return true;
}

function parseRun(text: string): TurnRun | undefined {
  const bar = text.indexOf("|");
  return bar < 0 ? undefined : { runId: text.slice(0, bar), workflow: text.slice(bar + 1) };
}

function parseFailure(outcome: string): { kind: "failed" | "cancelled"; runId: string; turn: number } {
  const [kind, runId, turn] = outcome.split("|");
  return { kind: kind === "cancelled" ? "cancelled" : "failed", runId: runId ?? "", turn: Number(turn) };
}
