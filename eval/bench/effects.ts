/**
 * The side-effect log the kill -9 and chaos harnesses read: one line per effect, `<pid> <kind>
 * <key> ...`, appended and fsynced before the writer goes on, so that a line on disk is an effect
 * that happened, whatever kill comes next. Every process of a harness appends to the same file
 * with O_APPEND, so the file's line order is the order in which the effects happened.
 *
 * Kinds: `start` / `end` (a tool call, by idempotency key), `recorded` (the call's outcome is
 * durable in the store), and with `recordingOutcomes(..., { leases: true })` also `lease` (the
 * store gave this process the run's lease with a fencing token), `released` (it let it go;
 * `unheard` after the fence when the store did not answer the release),
 * `lost` (the lease was lost) and `refused` (the store refused a commit with FORGE_LOCK_LOST).
 */
import { closeSync, fsyncSync, openSync, readFileSync, writeSync } from "node:fs";
import { RunLockedError } from "../../src/core/errors.js";
import type { RunLease, RunStore } from "../../src/persistence/run-store.js";

export type EffectWriter = (line: string) => void;

/**
 * The clock every effects line is stamped with: the machine's monotonic clock (CLOCK_MONOTONIC,
 * one for every process on the machine), in ms. Not the wall clock: a worker may run with its
 * wall clock skewed on purpose (libfaketime, which is told to leave the monotonic clock alone).
 */
export function machineMs(): number {
  return Number(process.hrtime.bigint() / 1000n) / 1000;
}

/** Wait until the run's lease is free: a killed or stopped holder's lease runs out, as a worker would wait for it. */
export async function leaseFree(store: RunStore, runId: string): Promise<void> {
  for (;;) {
    try {
      await (await store.lock(runId)).release();
      return;
    } catch (error) {
      if (!(error instanceof RunLockedError)) throw error;
      await new Promise((resolve) => setTimeout(resolve, error.expiresInMs + 5));
    }
  }
}

/** A writer of `<pid> <line>` lines to `file`, each on disk before it returns. */
export function effectWriter(file: string): EffectWriter {
  return (line) => {
    const fd = openSync(file, "a");
    try {
      writeSync(fd, `${process.pid} ${line}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  };
}

const codeOf = (error: unknown) => String((error as { code?: unknown } | undefined)?.code ?? "error");

/**
 * The store, noting in the side-effect log each outcome once its commit is durable: a later
 * process that starts that call again re-ran a recorded tool (the harnesses count it). With
 * `leases`, each lease taken (`lease <runId> <fence>`), released (`released <runId> <fence>`),
 * lost (`lost <runId> <fence> <code>`) and each commit refused for a lost lease (`refused <runId>
 * <fence>`) is noted too: the chaos
 * harness tells from them which process held a run when a tool started. `stamp` adds a field
 * at the end of every line (the chaos harness's clock).
 */
export function recordingOutcomes(inner: RunStore, effect: EffectWriter, options: { leases?: boolean; stamp?: () => string } = {}): RunStore {
  const note = (line: string) => effect(options.stamp ? `${line} ${options.stamp()}` : line);
  return new Proxy(inner, {
    get(target, key, receiver) {
      if (key === "commit") {
        return async (commit: Parameters<RunStore["commit"]>[0]) => {
          try {
            await target.commit(commit);
          } catch (error) {
            if (options.leases && codeOf(error) === "FORGE_LOCK_LOST") note(`refused ${commit.runId} ${commit.fence}`);
            throw error;
          }
          for (const event of commit.events) if (event.type === "outcome") note(`recorded ${event.key}`);
        };
      }
      if (key === "lock" && options.leases) {
        return async (runId: string) => {
          const lease = await target.lock(runId);
          note(`lease ${runId} ${lease.fence}`);
          lease.onLost((error) => note(`lost ${runId} ${lease.fence} ${codeOf(error)}`));
          return noteRelease(lease, (unheard) => note(`released ${runId} ${lease.fence}${unheard ? " unheard" : ""}`));
        };
      }
      const value = Reflect.get(target, key, receiver) as unknown;
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/**
 * The lease, noting its release once done (its methods bound to it: a Lease keeps private
 * fields). A release the store did not hear (unreachable) is noted too, as `unheard`: the
 * process let the lease go all the same (it starts no tool under it), and the store lets the
 * next holder in when it runs out.
 */
function noteRelease(lease: RunLease, released: (unheard: boolean) => void): RunLease {
  return new Proxy(lease, {
    get(target, key) {
      if (key === "release") {
        return async () => {
          try {
            await target.release();
          } catch (error) {
            released(true);
            throw error;
          }
          released(false);
        };
      }
      const value = Reflect.get(target, key) as unknown;
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** One line of the effects file, `<pid> <kind> <key> [fields...] <wall clock ms>`, with its place in the file. */
export interface EffectLine {
  index: number;
  pid: string;
  kind: string;
  key: string;
  fields: string[];
  at: number;
}

/** The effects file's lines (every one stamped with a clock, as the chaos harness writes them). */
export function readEffects(file: string): EffectLine[] {
  let text = "";
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return [];
  }
  return parseEffects(text);
}

export function parseEffects(text: string): EffectLine[] {
  return text
    .split("\n")
    .filter(Boolean)
    .map((line, index) => {
      const [pid = "", kind = "", key = "", ...rest] = line.split(" ");
      return { index, pid, kind, key, fields: rest.slice(0, -1), at: Number(rest.at(-1)) };
    });
}

/** The run a line is about: a call key `<runId>:<iteration>:<index>`, or a run id. */
export const runOf = (key: string): string => key.split(":")[0]!;

/**
 * What the chaos harness's effects file shows. Every figure is counted from lines on disk, in
 * file order (O_APPEND: the order the effects happened in):
 * - recordedReruns: a `start` of a call key after a `recorded` line of that key (must be 0);
 * - midCallReruns: a key started again without having been recorded (at-least-once, allowed);
 * - staleStarts: a tool started by a process whose lease of the run was no longer the newest
 *   (another process's `lease` line with a higher fence came before) or was released, or by a
 *   process with no lease of the run at all: two processes drove the run;
 * - runsTwice: runs with a stale start, or whose terminal tool completed (`end`) in two
 *   processes with no kill, stop or lost lease of the first between its terminal start and the
 *   second's (nothing explains why it ran again);
 * - orderViolations: a session turn whose first tool started before the last tool start or
 *   durable outcome of the turn before it (noted by its current holder), or that ran although
 *   the turn before it never did;
 * - moveOnMs: per run a killed worker held, from the kill to its first tool start elsewhere
 *   (moveOnAfter: the same after a stop or a link fault, from the fault's start);
 * - stolenFromStopped / unnoticedSteals: runs another process leased while their holder was
 *   SIGSTOPped or its host cut off (`cut` ... `healed` lines), and of those, the ones whose old
 *   holder never reported FORGE_LOCK_LOST (lost or refused) afterwards although it lived on;
 * - startsPastLease: a tool started by a process whose host had been cut off (its packets
 *   dropped, or its link down) for longer than the lease: its lease could not be renewed, so it
 *   ran out by then at the latest (needs `leaseMs`);
 * - liveSteals: a run leased by another process while its holder was under no fault (none of
 *   its own and no store restart, none within two leases before) and had neither released nor
 *   reported losing it: a lease taken while still live (needs `leaseMs`);
 * - unrecovered: a fault's victim that lived on but took no run after the fault ended (a stop,
 *   a link fault, or a server restart for every worker then alive; see checkRecovery), and
 *   recoveryMs: for the others, from the fault's end to their next lease.
 */
export interface EffectFindings {
  recordedReruns: number;
  midCallReruns: number;
  staleStarts: number;
  runsTwice: Set<string>;
  orderViolations: number;
  moveOnMs: number[];
  moveOnAfter: Record<"stopped" | "cut", number[]>;
  stolenFromStopped: number;
  unnoticedSteals: number;
  startsPastLease: number;
  liveSteals: number;
  unrecovered: number;
  recoveryMs: number[];
  /** From a call's `end` to its `recorded` line (the outcome's commit), by processes whose link was faulted at the time and by the others. */
  commitMs: { faulted: number[]; clean: number[] };
  /** Per server restart (`redis-restart`, `pg-restart` lines), from it to the next tool start by anyone. */
  resumeMs: number[];
  /** One sentence per problem found, in file order (the first ones are the ones to read). */
  problems: string[];
}

interface RunTrace {
  starts: EffectLine[];
  terminalStarts: EffectLine[];
  terminalEnds: EffectLine[];
  recorded: EffectLine[];
  /** `lost` / `refused` lines: a holder learnt it lost the lease. */
  lost: EffectLine[];
}

/** The lines a harness writes about its faults (the key is the victim's pid, or the server). */
const FAULT_START = new Set(["killed", "stopped", "cut"]);
const FAULT_END = new Set(["resumed", "healed"]);
const RESTART = new Set(["redis-restart", "pg-restart"]);
/** `pg-up pg <at>`: the database a `pg-restart` line stopped answers again. */
export const isFaultLine = (l: EffectLine) => FAULT_START.has(l.kind) || FAULT_END.has(l.kind) || RESTART.has(l.kind) || l.kind === "pg-up";

/**
 * `sessions`: each session's run ids in turn order; `terminal`: the terminal tool's name;
 * `leaseMs`: the store's lease, for the checks that need it (startsPastLease, liveSteals).
 */
export function analyzeEffects(lines: readonly EffectLine[], sessions: ReadonlyMap<string, readonly string[]>, terminal: string, leaseMs?: number): EffectFindings {
  const found: EffectFindings = { recordedReruns: 0, midCallReruns: 0, staleStarts: 0, runsTwice: new Set(), orderViolations: 0, moveOnMs: [], moveOnAfter: { stopped: [], cut: [] }, stolenFromStopped: 0, unnoticedSteals: 0, startsPastLease: 0, liveSteals: 0, unrecovered: 0, recoveryMs: [], commitMs: { faulted: [], clean: [] }, resumeMs: [], problems: [] };
  const traces = new Map<string, RunTrace>();
  const trace = (runId: string) => traces.get(runId) ?? traces.set(runId, { starts: [], terminalStarts: [], terminalEnds: [], recorded: [], lost: [] }).get(runId)!;
  const faults = faultLines(lines);
  scanCalls(lines, terminal, found, trace, faults, leaseMs);
  for (const [runId, t] of traces) checkTerminal(runId, t, faults, found);
  for (const [sessionId, runIds] of sessions) checkOrder(sessionId, runIds, traces, found);
  checkRecovery(lines, found);
  return found;
}

/** Kill, stop and cut lines by victim pid (the harness writes `killed <pid>` once the process is gone). */
function faultLines(lines: readonly EffectLine[]): Map<string, EffectLine[]> {
  const byPid = new Map<string, EffectLine[]>();
  for (const l of lines) if (FAULT_START.has(l.kind)) byPid.set(l.key, [...(byPid.get(l.key) ?? []), l]);
  return byPid;
}

/**
 * Re-runs and stale starts, move-on times after kills and takeovers during stops: one pass over
 * the lines in file order, keeping who holds which lease.
 */
function scanCalls(lines: readonly EffectLine[], terminal: string, found: EffectFindings, trace: (runId: string) => RunTrace, faults: Map<string, EffectLine[]>, leaseMs: number | undefined): void {
  const scan = new LeaseScan(found, trace, leaseMs);
  for (const l of lines) {
    if (l.kind === "lease") scan.lease(l);
    else if (l.kind === "recorded") scan.recorded(l);
    else if (l.kind === "start") scan.start(l);
    else if (l.kind === "end") scan.end(l);
    else if (l.kind === "released" || l.kind === "lost" || l.kind === "refused") scan.released(l);
    else if (FAULT_START.has(l.kind)) scan.fault(l);
    else if (FAULT_END.has(l.kind)) scan.faultEnd(l);
    else if (RESTART.has(l.kind)) scan.restart(l);
    else if (l.kind === "pg-up") scan.storeDown = l.at;
    if ((l.kind === "start" || l.kind === "end") && l.fields[0] === terminal) (l.kind === "start" ? trace(runOf(l.key)).terminalStarts : trace(runOf(l.key)).terminalEnds).push(l);
  }
  checkSteals(scan.steals, found, trace, faults);
}

class LeaseScan {
  /** run -> its newest lease, and whether its holder released it */
  readonly newest = new Map<string, { pid: string; fence: number; released: boolean }>();
  /** `${pid} ${run}` -> that process's latest fence of the run */
  readonly held = new Map<string, number>();
  readonly started = new Set<string>();
  readonly recordedKeys = new Set<string>();
  /** Runs a killed, stopped or cut-off process held, waiting for their first tool start elsewhere. */
  readonly afterFault: { runId: string; victim: string; at: number; kind: string }[] = [];
  /** stopped or cut-off pid -> the runs it held when the fault began */
  readonly stopped = new Map<string, Set<string>>();
  /** cut-off pid -> when its link stopped carrying packets (`cut <pid> cut|down` lines) */
  readonly cutAt = new Map<string, number>();
  /** pids whose link is faulted now (any `cut` line not yet `healed`) */
  readonly linkFaulted = new Set<string>();
  /** `${pid} ${key}` -> when that process's call ended, until its outcome is recorded */
  readonly ended = new Map<string, number>();
  /** pid -> when its latest fault ended (Infinity while it lasts); a killed pid stays at Infinity */
  readonly faultEnded = new Map<string, number>();
  readonly steals: { runId: string; victim: string; index: number }[] = [];
  /** Server restarts not yet followed by a tool start. */
  readonly restarts: number[] = [];
  /** Since when the store was down: Infinity while it is, the moment it came back after (no holder could renew meanwhile). */
  storeDown = -Infinity;

  constructor(
    readonly found: EffectFindings,
    readonly trace: (runId: string) => RunTrace,
    readonly leaseMs: number | undefined,
  ) {}

  lease(l: EffectLine): void {
    const runId = l.key;
    const fence = Number(l.fields[0]);
    const before = this.newest.get(runId);
    // A lower fence than the newest is an old grant noted late (its holder was stopped between
    // the grant and the line); the same fence given to two processes is a fencing failure.
    if (before && fence === before.fence && before.pid !== l.pid) {
      this.found.runsTwice.add(runId);
      this.found.problems.push(`line ${l.index + 1}: pid ${l.pid} was given lease ${fence} of ${runId}, which pid ${before.pid} was given too`);
    } else if (!before || fence > before.fence) {
      if (before && !before.released && before.pid !== l.pid) this.#takeover(l, before.pid);
      this.newest.set(runId, { pid: l.pid, fence, released: false });
      for (const [victim, runs] of this.stopped) if (victim !== l.pid && runs.delete(runId)) this.steals.push({ runId, victim, index: l.index });
    }
    this.held.set(`${l.pid} ${runId}`, fence);
  }

  /**
   * Released, lost or refused: the process no longer drives the run under that lease. A
   * release the store did not hear is a holder giving the run up because the store is out of
   * reach: it knows, as with a lost lease, that the run may pass to another.
   */
  released(l: EffectLine): void {
    if (l.kind !== "released" || l.fields[1] === "unheard") this.trace(l.key).lost.push(l);
    const top = this.newest.get(l.key);
    if (top?.pid === l.pid && top.fence === Number(l.fields[0])) top.released = true;
  }

  end(l: EffectLine): void {
    this.ended.set(`${l.pid} ${l.key}`, l.at);
  }

  recorded(l: EffectLine): void {
    this.recordedKeys.add(l.key);
    const endedAt = this.ended.get(`${l.pid} ${l.key}`);
    if (endedAt !== undefined) {
      this.ended.delete(`${l.pid} ${l.key}`);
      this.found.commitMs[this.linkFaulted.has(l.pid) ? "faulted" : "clean"].push(l.at - endedAt);
    }
    // A holder superseded by now wrote this line late (stopped between its commit and the line):
    // the commit came before the takeover, so the line does not mark where its turn ended.
    const runId = runOf(l.key);
    const top = this.newest.get(runId);
    if (!top || (top.pid === l.pid && top.fence === this.held.get(`${l.pid} ${runId}`))) this.trace(runId).recorded.push(l);
  }

  restart(l: EffectLine): void {
    this.restarts.push(l.at);
    if (l.kind === "pg-restart") this.storeDown = Infinity;
  }

  /**
   * A run taken from `holder`, which had not let it go: excused only by a fault of the holder,
   * or of the store (no holder renews while it is down), now or within two leases before.
   */
  #takeover(l: EffectLine, holder: string): void {
    if (this.leaseMs === undefined) return;
    if (l.at - this.storeDown < 2 * this.leaseMs) return;
    const ended = this.faultEnded.get(holder);
    if (ended !== undefined && l.at - ended < 2 * this.leaseMs) return;
    if (this.trace(l.key).lost.some((lost) => lost.pid === holder)) return;
    this.found.liveSteals++;
    this.found.problems.push(`line ${l.index + 1}: pid ${l.pid} took ${l.key} (lease ${l.fields[0]}) from pid ${holder}, which was under no fault and had not let it go`);
  }

  start(l: EffectLine): void {
    const runId = runOf(l.key);
    this.trace(runId).starts.push(l);
    const cut = this.cutAt.get(l.pid);
    // 250 ms: the line is written a moment after the lease was checked, on a loaded machine.
    if (cut !== undefined && this.leaseMs !== undefined && l.at > cut + this.leaseMs + 250) {
      this.found.startsPastLease++;
      this.found.problems.push(`line ${l.index + 1}: pid ${l.pid} started ${l.key} ${Math.round(l.at - cut)} ms into its host's cut, past the ${this.leaseMs} ms lease`);
    }
    if (this.restarts.length > 0) this.found.resumeMs.push(...this.restarts.splice(0).map((at) => l.at - at));
    if (this.recordedKeys.has(l.key)) {
      this.found.recordedReruns++;
      this.found.problems.push(`line ${l.index + 1}: pid ${l.pid} started ${l.key} again after its outcome was recorded`);
    } else if (this.started.has(l.key)) this.found.midCallReruns++;
    this.started.add(l.key);
    // The fencing check: the store had given the run to someone newer before this tool started.
    const mine = this.held.get(`${l.pid} ${runId}`);
    const top = this.newest.get(runId);
    if (mine === undefined || !top || top.fence > mine || top.released) {
      this.found.staleStarts++;
      this.found.runsTwice.add(runId);
      this.found.problems.push(`line ${l.index + 1}: pid ${l.pid} started ${l.key} under ${mine === undefined ? "no lease" : `lease ${mine}`} while pid ${top?.pid} held lease ${top?.fence}${top?.released ? " (released)" : ""}`);
    }
    for (let i = this.afterFault.length - 1; i >= 0; i--) {
      const k = this.afterFault[i]!;
      if (k.runId !== runId || k.victim === l.pid) continue;
      (k.kind === "killed" ? this.found.moveOnMs : this.found.moveOnAfter[k.kind as "stopped" | "cut"]).push(l.at - k.at);
      this.afterFault.splice(i, 1);
    }
  }

  /**
   * The runs whose newest lease the victim held (not released): the wait for them to move on
   * starts; a stop's or a cut's watch for takeovers. `cut <pid> <cut|down|lossy|slow>`: only a
   * cut or a link down stop every renewal, so only they bound when the victim may start a tool.
   */
  fault(l: EffectLine): void {
    const runs = [...this.newest].filter(([, lease]) => lease.pid === l.key && !lease.released).map(([runId]) => runId);
    this.afterFault.push(...runs.map((runId) => ({ runId, victim: l.key, at: l.at, kind: l.kind })));
    this.faultEnded.set(l.key, Infinity);
    if (l.kind === "killed") return;
    this.stopped.set(l.key, new Set(runs));
    if (l.kind !== "cut") return;
    this.linkFaulted.add(l.key);
    if (l.fields[0] === "cut" || l.fields[0] === "down") this.cutAt.set(l.key, l.at);
  }

  faultEnd(l: EffectLine): void {
    this.stopped.delete(l.key);
    this.cutAt.delete(l.key);
    this.linkFaulted.delete(l.key);
    this.faultEnded.set(l.key, l.at);
  }
}

/** How long (ms) leases must go on being granted after a fault ends for a victim with none of them to count as not recovered. */
export const RECOVERY_MS = 20_000;

/**
 * Every victim that lived on took work again after its fault ended (recoveryMs: from the
 * fault's end to its next lease). After a server restart every process that had leased a run
 * before it and was not killed owes one. A victim with no lease after its fault counts as not
 * recovered only when the batch went on granting leases for RECOVERY_MS after the fault ended
 * (otherwise it was ending, and the victim is not judged).
 */
function checkRecovery(lines: readonly EffectLine[], found: EffectFindings): void {
  const leases = lines.filter((l) => l.kind === "lease");
  const lastLeaseAt = leases.at(-1)?.at ?? -Infinity;
  const killed = new Set(lines.filter((l) => l.kind === "killed").map((l) => l.key));
  const seen = new Set<string>();
  const owed: { pid: string; fault: EffectLine }[] = [];
  for (const l of lines) {
    if (l.kind === "lease") seen.add(l.pid);
    if (FAULT_END.has(l.kind)) owed.push({ pid: l.key, fault: l });
    else if (RESTART.has(l.kind)) for (const pid of seen) owed.push({ pid, fault: l });
  }
  for (const { pid, fault } of owed) {
    if (killed.has(pid)) continue;
    const next = leases.find((l) => l.index > fault.index && l.pid === pid);
    if (next) found.recoveryMs.push(next.at - fault.at);
    else if (lastLeaseAt - fault.at >= RECOVERY_MS) {
      found.unrecovered++;
      found.problems.push(`line ${fault.index + 1}: pid ${pid} took no run in the ${Math.round((lastLeaseAt - fault.at) / 1000)} s of leases granted after ${fault.kind} ${fault.key}`);
    }
  }
}

/** A run taken from a stopped process: that process must learn it lost the lease (unless killed first). */
function checkSteals(steals: { runId: string; victim: string; index: number }[], found: EffectFindings, trace: (runId: string) => RunTrace, faults: Map<string, EffectLine[]>): void {
  for (const s of steals) {
    found.stolenFromStopped++;
    const noticed = trace(s.runId).lost.some((l) => l.pid === s.victim);
    const killedLater = (faults.get(s.victim) ?? []).some((f) => f.kind === "killed" && f.index > s.index);
    if (!noticed && !killedLater) {
      found.unnoticedSteals++;
      found.problems.push(`line ${s.index + 1}: run ${s.runId} was taken from stopped pid ${s.victim}, which never reported FORGE_LOCK_LOST for it`);
    }
  }
}

/**
 * The terminal tool completed in two processes: allowed only when the one that started it first
 * was killed or stopped before the other started it, or lost its lease (an in-flight call run
 * again, at-least-once). Paired by their starts: a stopped process's call ends after the other's.
 */
function checkTerminal(runId: string, t: RunTrace, faults: Map<string, EffectLine[]>, found: EffectFindings): void {
  const calls = t.terminalEnds
    .map((end) => ({ end, start: t.terminalStarts.filter((s) => s.pid === end.pid && s.index < end.index).at(-1) ?? end }))
    .sort((a, b) => a.start.index - b.start.index);
  for (let i = 1; i < calls.length; i++) {
    const first = calls[i - 1]!;
    const second = calls[i]!;
    if (first.end.pid === second.end.pid) continue;
    const pid = first.end.pid;
    const faulted = (faults.get(pid) ?? []).some((f) => f.index > first.start.index && f.index < second.start.index);
    const lost = t.lost.some((l) => l.pid === pid && l.index > first.start.index);
    if (faulted || lost) continue;
    found.runsTwice.add(runId);
    found.problems.push(`line ${second.end.index + 1}: run ${runId}'s terminal tool completed in pid ${pid} (line ${first.end.index + 1}) and again in pid ${second.end.pid}, with no fault or lost lease of ${pid} in between`);
  }
}

/**
 * Turn n starts only after turn n-1's last tool start and last outcome recorded by the run's
 * current holder (a superseded holder's `recorded` line is a late note of an earlier commit).
 */
function checkOrder(sessionId: string, runIds: readonly string[], traces: ReadonlyMap<string, RunTrace>, found: EffectFindings): void {
  for (let i = 1; i < runIds.length; i++) {
    const before = traces.get(runIds[i - 1]!);
    const after = traces.get(runIds[i]!);
    const firstStart = after?.starts[0];
    if (!firstStart) continue;
    const lastOfBefore = Math.max(-1, ...(before?.starts ?? []).map((l) => l.index), ...(before?.recorded ?? []).map((l) => l.index));
    if (lastOfBefore < 0 || firstStart.index < lastOfBefore) {
      found.orderViolations++;
      found.problems.push(
        lastOfBefore < 0
          ? `session ${sessionId}: turn ${i + 1} (${runIds[i]}) ran a tool (line ${firstStart.index + 1}) although turn ${i} (${runIds[i - 1]}) never ran one`
          : `session ${sessionId}: turn ${i + 1} (${runIds[i]}) started a tool at line ${firstStart.index + 1}, before turn ${i} (${runIds[i - 1]})'s last effect at line ${lastOfBefore + 1}`,
      );
    }
  }
}

/** The processes holding a run's newest lease, not released: the ones driving runs right now (as far as the lines say). */
export function leaseHolders(lines: readonly EffectLine[]): Set<string> {
  const newest = new Map<string, { pid: string; fence: number; released: boolean }>();
  for (const l of lines) {
    const top = newest.get(l.key);
    if (l.kind === "lease" && (!top || Number(l.fields[0]) > top.fence)) newest.set(l.key, { pid: l.pid, fence: Number(l.fields[0]), released: false });
    if ((l.kind === "released" || l.kind === "lost") && top?.pid === l.pid && top.fence === Number(l.fields[0])) top.released = true;
  }
  return new Set([...newest.values()].filter((lease) => !lease.released).map((lease) => lease.pid));
}
