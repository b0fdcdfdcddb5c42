/**
 * The partitions harness: the chaos workload (chaos-workflow.ts) on test hosts joined by a
 * network (netns.ts). Host `db` runs PostgreSQL and Redis, hosts `w1`–`w3` one run worker each
 * (chaos-worker.ts, a `startRunWorker` as `forge-ts worker` runs it, with its store noting each
 * lease, commit refusal and tool call), host `p` the two producers and this harness's own checks.
 * Faults between hosts while runs, ordered session turns and racing producers flow:
 * - `cut`: a worker's link drops every packet for longer than the lease (connections hang);
 * - `down`: a worker's link down for as long (connections fail at once);
 * - `lossy`: a share of a worker's packets dropped at random; `slow`: its link shaped to a rate;
 * - `skew`: workers w2 and w3 run with their wall clocks minutes ahead and behind (libfaketime),
 *   while workers are SIGSTOPped past the lease so that runs change hands among them;
 * - `pg-restart`: PostgreSQL stopped at once (immediate: clients cut, WAL recovery) and started;
 * - `redis-restart`, `kill` (kill -9), `stop` (SIGSTOP past the lease) as in the chaos harness.
 *
 * `partitionsBatch` builds the hosts, runs `partitionsOnHost` on host `p` (partitions-main.ts)
 * and tears the hosts down, also when it fails. The checks are the chaos harness's (every run's
 * outcome and stored state, the effects file) plus: no two holders committed to one run (the
 * fences in the database's own log never go down), no cut-off worker started a tool past its
 * lease, no lease taken from a holder under no fault, every victim took work again after its
 * fault.
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createPrng } from "../../src/clients/prng.js";
import { createRunQueue, type RunQueue } from "../../src/queue/run-queue.js";
import { chaosClean, Fleet, killAndReplace, pickVictim, redisRestart, runBatch, sleep, stopPastLease, type ChaosReport, type FaultContext, type WorkerProcess } from "./chaos-harness.js";
import { CHAOS_TIMING, openChaosStore } from "./chaos-workflow.js";
import { effectWriter, machineMs, RECOVERY_MS } from "./effects.js";
import { attachTopology, createTopology, type LinkFault, type Topology } from "./netns.js";
import { nodeArgs } from "./node-args.js";
import { postgresBinDir, startPostgres, type TestPostgres } from "./postgres-server.js";
import { startRedis } from "./redis-server.js";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const WORKER = path.join(HERE, "chaos-worker.ts");
const MAIN = path.join(HERE, "partitions-main.ts");

export const HOSTS = ["db", "w1", "w2", "w3", "p"] as const;
export const FAULT_KINDS = ["cut", "down", "lossy", "slow", "skew", "pg-restart", "redis-restart", "kill", "stop"] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** What a link fault does to the victim's link, and for how long (ms). */
export const LINK = {
  /** Past the lease and the job lock, so that the run moves on while the worker is cut off. */
  cutMs: [CHAOS_TIMING.lockDurationMs + 1_000, CHAOS_TIMING.lockDurationMs + 3_500],
  lossMs: [4_000, 6_000],
  lossPercent: 15,
  rateKbit: 32,
} as const;
/** The share of the spread in which faults start. */
export const FAULT_SHARE = 0.4;
/**
 * Wide enough that every fault ends with runs still to come for RECOVERY_MS: faults start in
 * the first FAULT_SHARE of the spread and last up to 5.5 s.
 */
export const spreadFor = (runs: number): number => Math.max(runs * 80, Math.ceil((RECOVERY_MS + 5_500) / (1 - FAULT_SHARE - 0.03)));

/** The skewed workers' clocks, w2 ahead and w3 behind (seconds). */
export const SKEW_SECONDS = 300;

export interface PartitionOptions {
  runs: number;
  /** Faults of each kind; `skew` is a count of SIGSTOPs while w2 and w3 run skewed (any count > 0 skews them). */
  faults: Partial<Record<FaultKind, number>>;
  spreadMs: number;
  settleMs: number;
  seed?: number;
  keep?: boolean;
  /** The workers' and this harness's modules: TypeScript through tsx by default, or their built .js twins. */
  workerModule?: string;
  mainModule?: string;
  /** Progress lines (default: none). */
  log?: (line: string) => void;
  /** The model's extra time per answer (ms, default 0): longer runs, so that a fault finds more of them in flight. */
  thinkMs?: number;
}

export interface PartitionReport extends ChaosReport {
  /** Runs whose log in the database holds a commit under a lower fence after one under a higher fence: two holders committed. */
  fenceRegressions: number;
  /** Runs committed under more than one fence (they changed hands). */
  handedOver: number;
  /** The workers' wall clocks less the harness's, as each said when ready (ms). */
  clockOffsetsMs: number[];
  faultKinds: string[];
}

/** Whether a report meets every target: the chaos harness's, and the ones across hosts. */
export function partitionsClean(r: PartitionReport): boolean {
  return chaosClean(r) && r.fenceRegressions === 0 && r.startsPastLease === 0 && r.liveSteals === 0 && r.unrecovered === 0;
}

/** Builds the hosts, runs one batch on host `p`, tears the hosts down; the report as host `p` printed it. */
export async function partitionsBatch(o: PartitionOptions): Promise<PartitionReport> {
  const tag = `fg${process.pid}${Math.floor(Math.random() * 1e4)}`;
  const topology = createTopology(HOSTS, tag);
  try {
    const { log, ...options } = o;
    const main = o.mainModule ?? MAIN;
    const [file, args] = topology.on("p", process.execPath, nodeArgs(main, tag, JSON.stringify(options)));
    // SIGTERM to host p's harness if this process dies (even by kill -9): it stops what it started.
    const child = spawn("setpriv", ["--pdeathsig", "TERM", "--", file, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => void (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => {
      err = (err + d.toString()).slice(-4_000);
      for (const line of d.toString().split("\n").filter(Boolean)) log?.(line);
    });
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
    const last = out.trim().split("\n").at(-1) ?? "";
    if (code !== 0 || !last.startsWith("{")) throw new Error(`partitions: the harness on host p exited ${code}: ${err.trim().split("\n").slice(-8).join("\n")}`);
    // NaN (a spread of no values) travels as null in JSON: back to NaN.
    return JSON.parse(last, (_key, value: unknown) => (value === null ? Number.NaN : value)) as PartitionReport;
  } finally {
    topology.destroy();
  }
}

/** The path of libfaketime, which Debian's faketime package installs (.ci/run does) under /usr/lib/<arch>/faketime. */
function libfaketime(): string {
  const found = readdirSync("/usr/lib")
    .map((arch) => path.join("/usr/lib", arch, "faketime", "libfaketime.so.1"))
    .find((file) => existsSync(file));
  if (!found) throw new Error("the skew fault needs libfaketime: apt-get install faketime (.ci/run installs it)");
  return found;
}

/** One batch, run on host `p` of the hosts tagged `tag`: servers on `db`, workers on w1–w3, the checks here. */
export async function partitionsOnHost(tag: string, o: PartitionOptions): Promise<PartitionReport> {
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const topology = attachTopology(HOSTS, tag);
  const rng = createPrng(o.seed ?? 42);
  const dir = mkdtempSync(path.join(tmpdir(), "forge-partitions-"));
  const effectsFile = path.join(dir, "effects.log");
  const effect = effectWriter(effectsFile);
  const db = topology.host("db");
  const on = (file: string, args: readonly string[]) => topology.on("db", file, args);
  const redis = await startRedis({ host: db.ip, port: 6379, on });
  let postgres: TestPostgres | undefined;
  let queues: RunQueue[] = [];
  const counts: Record<string, number> = {};
  const skewed = (o.faults.skew ?? 0) > 0;
  const preload = skewed ? libfaketime() : "";
  let fleet: Fleet | undefined;
  let store: ReturnType<typeof openChaosStore> | undefined;
  // The process that built the hosts died (partitionsBatch's pdeathsig): nothing started here may outlive it.
  const abort = () => {
    for (const w of fleet?.members ?? []) w.child.kill("SIGKILL");
    void redis.down();
    void postgres?.stop();
    process.exit(143);
  };
  process.once("SIGTERM", abort);
  try {
    postgres = await startPostgres({ host: db.ip, port: 5432, on });
    store = openChaosStore("postgres", postgres.url, CHAOS_TIMING.leaseMs);
    const args = [redis.url, "postgres", postgres.url, effectsFile, String(o.thinkMs ?? 0)];
    fleet = new Fleet((slot) => {
      const node = [process.execPath, ...nodeArgs(o.workerModule ?? WORKER, ...args)];
      // w2 ahead, w3 behind; the monotonic clock (leases, timers, the effects stamps) left alone.
      const skew = skewed && slot > 0 ? ["env", `FAKETIME=${slot === 1 ? "+" : "-"}${SKEW_SECONDS}`, "FAKETIME_DONT_FAKE_MONOTONIC=1", `LD_PRELOAD=${preload}`] : [];
      const [head, ...rest] = [...skew, ...node];
      const [file, argv] = topology.on(`w${slot + 1}`, head!, rest);
      return { file, args: argv };
    }, path.join(dir, "workers.log"));
    queues = [createRunQueue({ redis: redis.url, connectTimeoutMs: 2_000 }), createRunQueue({ redis: redis.url, connectTimeoutMs: 2_000 })];
    const ctx: FaultContext = { fleet, effectsFile, redis, effect, rng, counts, log };
    const pgServer = postgres;
    const f = fleet;
    const report = await runBatch(
      { store: "postgres", runs: o.runs, spreadMs: o.spreadMs, settleMs: o.settleMs, log },
      { fleet, workers: 3, store, queues: queues as [RunQueue, RunQueue], effectsFile, rng, counts, leaseMs: CHAOS_TIMING.leaseMs, inject: (startedAt) => inject(o, { ...ctx, topology, postgres: pgServer }, startedAt) },
    );
    const offsets = [...f.clockOffsetsMs];
    const fences = fenceHistory(postgres.url);
    const { examples, ...fenceCounts } = fences;
    const result: PartitionReport = { ...report, ...fenceCounts, clockOffsetsMs: offsets, faultKinds: Object.keys(o.faults) };
    if (fences.fenceRegressions > 0) result.problems.unshift(`the database's log holds ${fences.fenceRegressions} runs whose fences went down: ${examples.join(", ")}`);
    if (partitionsClean(result) && !o.keep) rmSync(dir, { recursive: true, force: true });
    else result.keptDir = dir;
    return result;
  } finally {
    process.off("SIGTERM", abort);
    await fleet?.close();
    await Promise.all(queues.map((q) => q.close()));
    await (store as { close?: () => Promise<void> } | undefined)?.close?.();
    await redis.stop();
    await postgres?.stop();
  }
}

/** From the database's own log (psql, the package's client): runs where a commit's fence is below an earlier commit's. */
function fenceHistory(url: string): { fenceRegressions: number; handedOver: number; examples: string[] } {
  const query = (sql: string) => execFileSync(path.join(postgresBinDir(), "psql"), [url, "-Atc", sql], { encoding: "utf8", timeout: 60_000 }).trim().split("\n").filter(Boolean);
  const regressed = query("SELECT DISTINCT a.run_id FROM forge_log a JOIN forge_log b ON b.run_id = a.run_id AND b.seq > a.seq AND b.fence < a.fence");
  const handed = query("SELECT count(*) FROM (SELECT run_id FROM forge_log GROUP BY run_id HAVING count(DISTINCT fence) > 1) t");
  return { fenceRegressions: regressed.length, handedOver: Number(handed[0] ?? 0), examples: regressed.slice(0, 5) };
}

interface HostContext extends FaultContext {
  topology: Topology;
  postgres: TestPostgres;
}

/**
 * Each kind's faults at random moments in equal slots of the first FAULT_SHARE of the spread,
 * so that every victim has runs to take for a while after its fault ends (the recovery check
 * judges a victim only when leases went on for RECOVERY_MS after its fault). Server restarts run in
 * turn; stops and link faults overlap, but never two on one worker, and one worker always
 * serves.
 */
async function inject(o: PartitionOptions, ctx: HostContext, startedAt: number): Promise<void> {
  const schedule = Object.entries(o.faults)
    .flatMap(([kind, count]) => Array.from({ length: count ?? 0 }, (_, i) => ({ kind: kind as FaultKind, at: (0.03 + (FAULT_SHARE * (i + ctx.rng.next())) / (count ?? 1)) * o.spreadMs })))
    .sort((a, b) => a.at - b.at);
  const running: Promise<void>[] = [];
  const busy = new Set<WorkerProcess>();
  const hold = (w: WorkerProcess, fault: Promise<void>) => {
    busy.add(w);
    running.push(fault.finally(() => busy.delete(w)));
  };
  for (const fault of schedule) {
    await sleep(startedAt + fault.at - Date.now());
    if (fault.kind === "redis-restart") await redisRestart(ctx);
    else if (fault.kind === "pg-restart") await pgRestart(ctx);
    else {
      // The victim and one more worker free of faults: some worker always serves.
      const victim = await pickVictim(ctx, 2, fault.kind, busy);
      if (!victim) continue;
      if (fault.kind === "kill") await killAndReplace(ctx, victim);
      else if (fault.kind === "stop" || fault.kind === "skew") hold(victim, stopPastLease(ctx, victim));
      else hold(victim, linkFault(ctx, victim, fault.kind));
    }
  }
  await Promise.all(running);
}

async function pgRestart(ctx: HostContext): Promise<void> {
  ctx.effect(`pg-restart pg ${machineMs()}`);
  await ctx.postgres.restart();
  ctx.effect(`pg-up pg ${machineMs()}`);
  ctx.counts["pg-restart"] = (ctx.counts["pg-restart"] ?? 0) + 1;
}

/**
 * The victim's link faulted, then healed. The `cut` line is written once packets stop (its
 * stamp is at or after the fault: the lease bound checked from it is never early), `healed`
 * before they flow again (every line the worker writes with a working link follows it).
 */
async function linkFault(ctx: HostContext, w: WorkerProcess, kind: LinkFault): Promise<void> {
  const host = `w${w.slot + 1}`;
  const [from, to] = kind === "cut" || kind === "down" ? LINK.cutMs : LINK.lossMs;
  const ms = from + ctx.rng.int(to - from);
  ctx.topology.fault(host, kind, { lossPercent: LINK.lossPercent, rateKbit: LINK.rateKbit });
  ctx.effect(`cut ${w.pid} ${kind} ${machineMs()}`);
  ctx.counts[kind] = (ctx.counts[kind] ?? 0) + 1;
  try {
    await sleep(ms);
  } finally {
    ctx.effect(`healed ${w.pid} ${machineMs()}`);
    ctx.topology.heal(host);
  }
}
