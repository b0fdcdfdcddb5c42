/**
 * The chaos harness: worker processes (chaos-worker.ts) on a real redis-server and a shared run
 * store (a directory, a libSQL file database or a PostgreSQL server) take a batch of runs and
 * session turns from two producers while the harness kills workers with kill -9 (and starts
 * replacements), SIGSTOPs them for longer than their lease, and restarts Redis. Then it checks,
 * from the producers' outcomes, the store and the effects file (effects.ts), that every run
 * ended as it must, exactly once where it matters, in session order.
 *
 * Nothing the harness cannot verify counts as a success: a run is correct only when its outcome
 * and the store both say what the workload expects (chaos-workflow.ts); everything else is
 * wrong or lost, with the first problems written out for diagnosis.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { appendFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createPrng, type Prng } from "../../src/clients/prng.js";
import type { RunStore } from "../../src/persistence/run-store.js";
import { createRunQueue, type EnqueuedRun, type RunQueue } from "../../src/queue/run-queue.js";
import { CHAOS_TIMING, CHAOS_WORKFLOW, expectations, judge, openChaosStore, planWorkload, type ChaosStoreKind, type Expectation, type Outcome, type RunError, type PlannedRun, type PlannedUnit, type StoredRun } from "./chaos-workflow.js";
import { analyzeEffects, effectWriter, isFaultLine, leaseHolders, machineMs, readEffects, runOf, type EffectLine, type EffectWriter } from "./effects.js";
import { startPostgres } from "./postgres-server.js";
import { startRedis, type TestRedis } from "./redis-server.js";
import { nodeArgs } from "./node-args.js";

const WORKER = path.join(path.dirname(fileURLToPath(import.meta.url)), "chaos-worker.ts");

export interface ChaosOptions {
  store: ChaosStoreKind;
  runs: number;
  kills: number;
  stops: number;
  redisRestarts: number;
  /** Worker processes (default 3). */
  workers?: number;
  seed?: number;
  /** Enqueues and faults are spread over this long (ms). */
  spreadMs: number;
  /** How long the runs may take to finish after the last enqueue. */
  settleMs: number;
  /** Progress lines (default: none). */
  log?: (line: string) => void;
  /** How many of the enqueued runs have an outcome, as they settle (the bench draws it). */
  onSettled?: (done: number, total: number) => void;
  /** Keep the run's directory (effects file, workers' stderr, store) even when every check passed. */
  keep?: boolean;
  /** The workers' module: chaos-worker.ts (run through tsx) by default, or its built .js twin. */
  workerModule?: string;
}

export interface ChaosReport {
  store: ChaosStoreKind;
  planned: number;
  enqueued: number;
  correct: number;
  wrong: number;
  lost: number;
  /** Enqueued runs expected to fail: turns whose tool throws, and the later turns of their sessions (to fail fast). */
  failingTurns: number;
  failedFast: number;
  runsTwice: number;
  staleStarts: number;
  recordedReruns: number;
  midCallReruns: number;
  orderViolations: number;
  sessions: number;
  jammedSessions: number;
  /** Faults by kind: kill, stop, redisRestart here; the partitions harness adds its own. */
  faults: Record<string, number>;
  /** Runs leased by another worker while their holder was stopped; those whose holder never saw FORGE_LOCK_LOST. */
  stolenFromStopped: number;
  unnoticedSteals: number;
  /** From a kill to the first tool start of the killed worker's run elsewhere. */
  moveOnMs: Spread;
  /** The same from a stop's or a link fault's start (cut). */
  moveOnAfter: { stopped: Spread; cut: Spread };
  /** From a server restart to the next tool start by anyone. */
  resumeMs: Spread;
  /** Tool starts by a cut-off worker past its lease; runs taken from a holder under no fault; fault victims that never took a run again (effects.ts). */
  startsPastLease: number;
  liveSteals: number;
  unrecovered: number;
  /** From a fault's end to its victim's next lease. */
  recoveryMs: Spread;
  /** An outcome's commit (a call's end to its recorded line), on a faulted link and on the others. */
  commitMs: { faulted: Spread; clean: Spread };
  /** Worker processes that exited without being killed by the harness. */
  workerCrashes: number;
  seconds: number;
  /** The first problems found, each with its evidence; the first is the one to read. */
  problems: string[];
  /** The run's directory (effects file, workers' stderr), kept when something failed. */
  keptDir?: string;
}

export interface Spread {
  median: number;
  max: number;
  count: number;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** redis-server (append-only, so a restart keeps the queues) and the store's location (a PostgreSQL server for "postgres"). */
async function startServers(kind: ChaosStoreKind, dir: string): Promise<{ redis: TestRedis; location: string; stop(): Promise<void> }> {
  const redis = await startRedis();
  if (kind !== "postgres") return { redis, location: path.join(dir, "store"), stop: () => redis.stop() };
  const pg = await startPostgres().catch(async (error: unknown) => {
    await redis.stop();
    throw error;
  });
  return { redis, location: pg.url, stop: async () => void (await Promise.all([redis.stop(), pg.stop()])) };
}

export interface WorkerProcess {
  child: ChildProcess;
  pid: number;
  /** Which worker of the fleet (a replacement takes its predecessor's slot: the same host). */
  slot: number;
  ready: boolean;
  stopped: boolean;
  exited: boolean;
  /** Killed by the harness (a fault, or the end): its exit is no crash. */
  ended: boolean;
  /** Its wall clock less the harness's when it said ready (a skewed clock shows here). */
  clockOffsetMs?: number;
}

/** How to start the worker of a slot: a command, its argv and extra environment. */
export type WorkerLaunch = (slot: number) => { file: string; args: string[]; env?: Record<string, string> };

/** The worker processes: started, killed, stopped; one that dies by itself is a crash (and is replaced in its slot). */
export class Fleet {
  readonly members = new Set<WorkerProcess>();
  readonly crashes: string[] = [];
  /** Each worker's wall clock less the harness's, as it said when ready. */
  readonly clockOffsetsMs: number[] = [];
  #closing = false;

  constructor(
    readonly launch: WorkerLaunch,
    readonly stderrFile: string,
  ) {}

  spawn(slot: number): WorkerProcess {
    const { file, args, env } = this.launch(slot);
    const child = spawn(file, args, { stdio: ["ignore", "pipe", "pipe"], ...(env ? { env: { ...process.env, ...env } } : {}) });
    const w: WorkerProcess = { child, pid: child.pid!, slot, ready: false, stopped: false, exited: false, ended: false };
    let tail = "";
    child.stdout!.on("data", (d: Buffer) => {
      const ready = /ready (\d+)/.exec(d.toString());
      if (!ready) return;
      w.clockOffsetMs = Number(ready[1]) - Date.now();
      this.clockOffsetsMs.push(w.clockOffsetMs);
      w.ready = true;
    });
    child.stderr!.on("data", (d: Buffer) => {
      tail = (tail + d.toString()).slice(-2_000);
      appendFileSync(this.stderrFile, d.toString().replace(/^(?=.)/gm, `[${w.pid}] `));
    });
    child.once("exit", (code, signal) => {
      w.exited = true;
      this.members.delete(w);
      if (w.ended || this.#closing) return;
      this.crashes.push(`worker pid ${w.pid} exited by itself (${code ?? signal}): ${tail.trim().split("\n").slice(-3).join(" | ")}`);
      this.spawn(w.slot);
    });
    this.members.add(w);
    return w;
  }

  /** Ready, running, not stopped. */
  serving(): WorkerProcess[] {
    return [...this.members].filter((w) => w.ready && !w.stopped && !w.exited);
  }

  /** Until `count` workers serve, not counting `besides`. */
  async waitServing(count: number, timeoutMs: number, besides: ReadonlySet<WorkerProcess> = new Set()): Promise<boolean> {
    const until = Date.now() + timeoutMs;
    while (this.serving().filter((w) => !besides.has(w)).length < count) {
      if (Date.now() > until) return false;
      await sleep(20);
    }
    return true;
  }

  /** SIGKILL; resolves once the process is gone, with the moment the signal was sent. */
  async kill(w: WorkerProcess): Promise<number> {
    w.ended = true;
    const exited = w.exited ? Promise.resolve() : new Promise((resolve) => w.child.once("exit", resolve));
    const at = machineMs();
    w.child.kill("SIGKILL");
    await exited;
    return at;
  }

  async close(): Promise<void> {
    this.#closing = true;
    const left = [...this.members];
    for (const w of left) if (w.stopped) w.child.kill("SIGCONT");
    await Promise.all(
      left.map(async (w) => {
        w.ended = true;
        const exited = w.exited ? Promise.resolve() : new Promise((resolve) => w.child.once("exit", resolve));
        w.child.kill("SIGTERM");
        const timer = setTimeout(() => w.child.kill("SIGKILL"), 10_000);
        await exited;
        clearTimeout(timer);
      }),
    );
  }
}

type FaultKind = "kill" | "stop" | "redis";

/**
 * Each kind's faults at random moments of the spread, one in each of as many equal slots (so
 * that kills do not come in bursts that leave no worker standing); Redis restarts in the middle
 * of theirs.
 */
function faultSchedule(o: ChaosOptions, rng: Prng): { at: number; kind: FaultKind }[] {
  const spaced = (kind: FaultKind, count: number, jitter: () => number) =>
    Array.from({ length: count }, (_, i) => ({ kind, at: (0.03 + (0.94 * (i + jitter())) / count) * o.spreadMs }));
  const random = () => rng.next();
  return [...spaced("kill", o.kills, random), ...spaced("stop", o.stops, random), ...spaced("redis", o.redisRestarts, () => 0.5)].sort((a, b) => a.at - b.at);
}

export interface FaultContext {
  fleet: Fleet;
  effectsFile: string;
  redis: TestRedis;
  effect: EffectWriter;
  rng: Prng;
  counts: ChaosReport["faults"];
  log: (line: string) => void;
}

/**
 * Each fault at its moment, on a random serving worker (never a stopped one), one that holds a
 * run's lease when any does. A kill starts the victim's replacement; a stop keeps at least one
 * other worker serving, and lasts from just over the store lease to past the job lock plus a
 * stalled check, so that some stopped workers lose their runs to others and some wake before
 * anyone took them. A fault with no worker to take within 60 s is skipped (and not counted):
 * a replacement worker takes seconds to start on a loaded machine.
 */
async function injectFaults(schedule: { at: number; kind: FaultKind }[], ctx: FaultContext, startedAt: number): Promise<void> {
  const stops: Promise<void>[] = [];
  for (const fault of schedule) {
    await sleep(startedAt + fault.at - Date.now());
    if (fault.kind === "redis") {
      await redisRestart(ctx);
      continue;
    }
    const victim = await pickVictim(ctx, fault.kind === "stop" ? 2 : 1, fault.kind);
    if (!victim) continue;
    if (fault.kind === "kill") await killAndReplace(ctx, victim);
    else stops.push(stopPastLease(ctx, victim));
  }
  await Promise.all(stops);
}

/** Redis killed and started again on its port (append-only file: the queues survive). */
export async function redisRestart(ctx: FaultContext): Promise<void> {
  await ctx.redis.restart();
  ctx.effect(`redis-restart redis ${machineMs()}`);
  ctx.counts.redisRestart = (ctx.counts.redisRestart ?? 0) + 1;
}

/**
 * A serving worker to hit, one driving a run when any does (a fault on an idle worker tests
 * little), or undefined (logged) when fewer than `serving` serve within 60 s: a replacement
 * worker takes seconds to start on a loaded machine. `spare`: workers that may not be picked.
 */
export async function pickVictim(ctx: FaultContext, serving: number, what: string, spare: ReadonlySet<WorkerProcess> = new Set()): Promise<WorkerProcess | undefined> {
  if (!(await ctx.fleet.waitServing(serving, 60_000, spare))) {
    ctx.log(`chaos: no worker to ${what}; skipped`);
    return undefined;
  }
  const ready = ctx.fleet.serving().filter((w) => !spare.has(w));
  const busy = leaseHolders(readEffects(ctx.effectsFile));
  const candidates = ready.some((w) => busy.has(String(w.pid))) ? ready.filter((w) => busy.has(String(w.pid))) : ready;
  return candidates[ctx.rng.int(candidates.length)]!;
}

/** kill -9, and a replacement in the victim's slot. */
export async function killAndReplace(ctx: FaultContext, victim: WorkerProcess): Promise<void> {
  const at = await ctx.fleet.kill(victim);
  // Written once the process is gone: none of its lines can follow this one.
  ctx.effect(`killed ${victim.pid} ${at}`);
  ctx.counts.kill = (ctx.counts.kill ?? 0) + 1;
  ctx.fleet.spawn(victim.slot);
}

/**
 * SIGSTOP from just over the store lease to past the job lock plus a stalled check, so that
 * some stopped workers lose their runs to others and some wake before anyone took them.
 */
export async function stopPastLease(ctx: FaultContext, w: WorkerProcess): Promise<void> {
  ctx.counts.stop = (ctx.counts.stop ?? 0) + 1;
  const ms = CHAOS_TIMING.leaseMs + 200 + ctx.rng.int(2_300);
  w.stopped = true;
  w.child.kill("SIGSTOP");
  ctx.effect(`stopped ${w.pid} ${machineMs()}`);
  await sleep(ms);
  // Written before SIGCONT: every line the worker writes from now on follows it.
  ctx.effect(`resumed ${w.pid} ${machineMs()}`);
  if (!w.exited) w.child.kill("SIGCONT");
  w.stopped = false;
}

/** Enqueue with retries (Redis may be restarting): the run id makes a retry safe. */
async function enqueue(queue: RunQueue, run: PlannedRun, deadline: number, failures: string[]): Promise<EnqueuedRun | undefined> {
  for (;;) {
    try {
      return await queue.enqueueRun({ workflow: CHAOS_WORKFLOW, runId: run.runId, text: run.text, ...(run.sessionId === undefined ? {} : { sessionId: run.sessionId }) });
    } catch (error) {
      if (Date.now() > deadline) {
        failures.push(`run ${run.runId} could not be enqueued by the deadline: ${(error as Error).message}`);
        return undefined;
      }
      await sleep(200);
    }
  }
}

/**
 * The units at an even pace over the spread. A session's turns go in order from their
 * producer; a racing session's two producers enqueue their turns at the same time.
 */
async function produce(units: PlannedUnit[], queues: [RunQueue, RunQueue], o: BatchOptions, startedAt: number, failures: string[]): Promise<Map<string, EnqueuedRun>> {
  const handles = new Map<string, EnqueuedRun>();
  const deadline = startedAt + o.spreadMs + o.settleMs;
  const sequence = async (runs: PlannedRun[], queue: RunQueue) => {
    for (const run of runs) {
      const handle = await enqueue(queue, run, deadline, failures);
      if (handle) handles.set(run.runId, handle);
    }
  };
  await Promise.all(
    units.map(async (unit, i) => {
      await sleep(startedAt + (i * o.spreadMs) / units.length - Date.now());
      // Not racing: the whole unit on one of the two queues, in turn.
      if (!unit.racing) return sequence(unit.runs, queues[i % 2]!);
      await Promise.all([0, 1].map((p) => sequence(unit.runs.filter((r) => r.producer === p), queues[p]!)));
    }),
  );
  return handles;
}

/** Each run's outcome once its job reached a final state, looked at until the deadline. */
async function settle(handles: ReadonlyMap<string, EnqueuedRun>, queue: RunQueue, deadline: number, log: (line: string) => void, onSettled?: (done: number, total: number) => void): Promise<Map<string, Outcome>> {
  const outcomes = new Map<string, Outcome>();
  let reported = Date.now();
  const look = async (runId: string) => {
    const info = await queue.job(CHAOS_WORKFLOW, runId).catch(() => undefined);
    if (info?.state !== "completed" && info?.state !== "failed") return;
    const outcome: Outcome = await handles.get(runId)!.result(5_000).then(
      (value) => ({ value }),
      (error: RunError) => ({ error }),
    );
    // result() itself timing out (Redis away a moment) is no outcome: look again.
    if ("error" in outcome && /did not finish within/.test(outcome.error.message)) return;
    outcomes.set(runId, outcome);
  };
  while (outcomes.size < handles.size && Date.now() < deadline) {
    const pending = [...handles.keys()].filter((id) => !outcomes.has(id));
    for (let i = 0; i < pending.length; i += 25) await Promise.all(pending.slice(i, i + 25).map(look));
    onSettled?.(outcomes.size, handles.size);
    if (Date.now() - reported > 5_000) {
      reported = Date.now();
      log(`chaos: ${outcomes.size} of ${handles.size} runs finished`);
    }
    await sleep(250);
  }
  return outcomes;
}

/** The run as the store has it. */
async function storedRun(store: RunStore, runId: string): Promise<StoredRun> {
  const checkpoint = await store.latest(runId);
  if (!checkpoint) return undefined;
  const context = checkpoint.snapshot.context as { terminal?: { result: unknown }; error?: { code?: string } };
  return { status: checkpoint.status, ...(context.terminal ? { result: context.terminal.result } : {}), ...(context.error?.code ? { errorCode: context.error.code } : {}) };
}

/** A run's lines in the effects file and the faults while it ran, for a problem's evidence. */
function evidence(runId: string, lines: readonly EffectLine[]): string {
  const own = lines.filter((l) => !isFaultLine(l) && runOf(l.key) === runId);
  if (own.length === 0) return "no effects";
  const from = own[0]!.index;
  const until = own.at(-1)!.index;
  const faults = lines.filter((l) => l.index >= from && l.index <= until && isFaultLine(l));
  const show = (l: EffectLine) => `#${l.index + 1} ${l.pid} ${l.kind} ${l.key}${l.fields.length ? " " + l.fields.join(" ") : ""}`;
  return [...own, ...faults].sort((a, b) => a.index - b.index).map(show).join("; ");
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? NaN : sorted[Math.floor((sorted.length - 1) / 2)]!;
};

const spread = (values: number[]): Spread => ({ median: median(values), max: values.length ? Math.max(...values) : NaN, count: values.length });

interface Batch {
  units: PlannedUnit[];
  handles: ReadonlyMap<string, EnqueuedRun>;
  outcomes: ReadonlyMap<string, Outcome>;
}

/** Every planned run judged against its expectation, its outcome and the store. */
async function judgeRuns(batch: Batch, store: RunStore, lines: readonly EffectLine[]) {
  const turns = new Map([...batch.handles].filter(([, h]) => h.turn !== undefined).map(([id, h]) => [id, h.turn!]));
  const tally = { correct: 0, wrong: 0, lost: 0, jammedSessions: 0, failingTurns: 0, failedFast: 0, problems: [] as string[] };
  const sessions = new Map<string, string[]>();
  for (const unit of batch.units) {
    const expected: Map<string, Expectation> = expectations(unit, turns);
    for (const run of unit.runs) {
      if (!batch.handles.has(run.runId)) continue; // not enqueued: reported by the producer
      if (expected.get(run.runId)!.kind === "tool-failure") tally.failingTurns++;
      if (expected.get(run.runId)!.kind === "failed-fast") tally.failedFast++;
      const stored = await storedRun(store, run.runId).then(
        (s) => ({ s }),
        (error: Error) => ({ error }),
      );
      const verdict = "error" in stored ? { kind: "wrong" as const, why: `the store cannot read it: ${stored.error.message}` } : judge(expected.get(run.runId)!, batch.outcomes.get(run.runId), stored.s);
      tally[verdict.kind]++;
      if (verdict.kind !== "correct") tally.problems.push(`run ${run.runId} ${verdict.kind}: ${verdict.why}; effects: ${evidence(run.runId, lines)}`);
    }
    if (unit.sessionId === undefined) continue;
    sessions.set(unit.sessionId, [...unit.runs].sort((a, b) => (turns.get(a.runId) ?? Infinity) - (turns.get(b.runId) ?? Infinity)).map((r) => r.runId));
    if (unit.runs.some((r) => !batch.outcomes.has(r.runId))) tally.jammedSessions++;
  }
  return { ...tally, sessions };
}

/** The report: runs judged, the effects file analysed, problems in order (crashes, enqueue failures, runs, effects). */
async function measure(o: BatchOptions, batch: Batch, store: RunStore, effectsFile: string, extra: { crashes: string[]; enqueueFailures: string[]; faults: ChaosReport["faults"]; seconds: number; leaseMs: number }): Promise<ChaosReport> {
  const lines = readEffects(effectsFile);
  const runs = await judgeRuns(batch, store, lines);
  const found = analyzeEffects(lines, runs.sessions, "finish", extra.leaseMs);
  const problems = [...extra.crashes, ...extra.enqueueFailures, ...runs.problems, ...found.problems];
  return {
    store: o.store,
    planned: batch.units.reduce((n, u) => n + u.runs.length, 0),
    enqueued: batch.handles.size,
    correct: runs.correct,
    wrong: runs.wrong,
    lost: runs.lost,
    failingTurns: runs.failingTurns,
    failedFast: runs.failedFast,
    runsTwice: found.runsTwice.size,
    staleStarts: found.staleStarts,
    recordedReruns: found.recordedReruns,
    midCallReruns: found.midCallReruns,
    orderViolations: found.orderViolations,
    sessions: runs.sessions.size,
    jammedSessions: runs.jammedSessions,
    faults: extra.faults,
    stolenFromStopped: found.stolenFromStopped,
    unnoticedSteals: found.unnoticedSteals,
    moveOnMs: spread(found.moveOnMs),
    moveOnAfter: { stopped: spread(found.moveOnAfter.stopped), cut: spread(found.moveOnAfter.cut) },
    resumeMs: spread(found.resumeMs),
    startsPastLease: found.startsPastLease,
    liveSteals: found.liveSteals,
    unrecovered: found.unrecovered,
    recoveryMs: spread(found.recoveryMs),
    commitMs: { faulted: spread(found.commitMs.faulted), clean: spread(found.commitMs.clean) },
    workerCrashes: extra.crashes.length,
    seconds: extra.seconds,
    problems: problems.slice(0, 20),
  };
}

/** Whether the report meets every target (the counts that must be 0, and every enqueued run correct). */
export function chaosClean(r: ChaosReport): boolean {
  return r.enqueued === r.planned && r.correct === r.enqueued && r.lost === 0 && r.runsTwice === 0 && r.recordedReruns === 0 && r.orderViolations === 0 && r.jammedSessions === 0 && r.unnoticedSteals === 0 && r.workerCrashes === 0;
}

/** What a batch needs besides its servers: the workload and how long it may take. */
export type BatchOptions = Pick<ChaosOptions, "store" | "runs" | "spreadMs" | "settleMs" | "log" | "onSettled">;

/** A batch's moving parts, started by its harness (and stopped by it afterwards). */
export interface BatchSetup {
  fleet: Fleet;
  workers: number;
  store: RunStore;
  queues: [RunQueue, RunQueue];
  effectsFile: string;
  rng: Prng;
  counts: ChaosReport["faults"];
  /** The store's lease (ms), for the checks that depend on it. */
  leaseMs: number;
  /** The faults, timed from `startedAt` (Date.now()); resolves once the last is over. */
  inject(startedAt: number): Promise<void>;
}

/**
 * One batch: the workers started, the workload produced at an even pace while the faults come,
 * every run settled (or the deadline passed), the workers stopped, then every check. The
 * harness that built `setup` stops its servers and queues.
 */
export async function runBatch(o: BatchOptions, setup: BatchSetup): Promise<ChaosReport> {
  const { fleet, workers, store, queues, effectsFile } = setup;
  const log = o.log ?? (() => undefined);
  const enqueueFailures: string[] = [];
  await store.listRuns(); // creates the store's tables before the workers race to
  for (let i = 0; i < workers; i++) fleet.spawn(i);
  if (!(await fleet.waitServing(workers, 60_000))) throw new Error(`chaos: ${workers} workers did not start within 60 s: ${fleet.crashes.join("; ")}`);
  const units = planWorkload(o.runs, setup.rng);
  const startedAt = Date.now();
  const injecting = setup.inject(startedAt);
  const handles = await produce(units, queues, o, startedAt, enqueueFailures);
  const outcomes = await settle(handles, queues[0], startedAt + o.spreadMs + o.settleMs, log, o.onSettled);
  await injecting;
  const seconds = (Date.now() - startedAt) / 1000;
  // Every worker gone before the effects file is read: a worker woken by the last SIGCONT
  // writes its lost leases after the fault is over.
  await fleet.close();
  return measure(o, { units, handles, outcomes }, store, effectsFile, { crashes: fleet.crashes, enqueueFailures, faults: setup.counts, seconds, leaseMs: setup.leaseMs });
}

/** One store's chaos run, start to end; its servers and processes are gone when it returns. */
export async function chaosHarness(o: ChaosOptions): Promise<ChaosReport> {
  const log = o.log ?? (() => undefined);
  const rng = createPrng(o.seed ?? 42);
  const dir = mkdtempSync(path.join(tmpdir(), `forge-chaos-${o.store}-`));
  const effectsFile = path.join(dir, "effects.log");
  const effect = effectWriter(effectsFile);
  const servers = await startServers(o.store, dir);
  const store = openChaosStore(o.store, servers.location);
  const args = [servers.redis.url, o.store, servers.location, effectsFile];
  const fleet = new Fleet(() => ({ file: process.execPath, args: nodeArgs(o.workerModule ?? WORKER, ...args) }), path.join(dir, "workers.log"));
  const queues: [RunQueue, RunQueue] = [createRunQueue({ redis: servers.redis.url, connectTimeoutMs: 2_000 }), createRunQueue({ redis: servers.redis.url, connectTimeoutMs: 2_000 })];
  const counts = { kill: 0, stop: 0, redisRestart: 0 };
  let report: ChaosReport;
  try {
    log(`chaos ${o.store}: ${o.runs} runs over ${o.spreadMs} ms; ${o.kills} kills, ${o.stops} stops, ${o.redisRestarts} Redis restarts`);
    const ctx = { fleet, effectsFile, redis: servers.redis, effect, rng, counts, log };
    report = await runBatch(o, { fleet, workers: o.workers ?? 3, store, queues, effectsFile, rng, counts, leaseMs: CHAOS_TIMING.leaseMs, inject: (startedAt) => injectFaults(faultSchedule(o, rng), ctx, startedAt) });
  } finally {
    await fleet.close();
    await Promise.all(queues.map((q) => q.close()));
    await (store as { close?: () => Promise<void> }).close?.();
    await servers.stop();
  }
  if (chaosClean(report) && !o.keep) rmSync(dir, { recursive: true, force: true });
  else report.keptDir = dir;
  return report;
}
