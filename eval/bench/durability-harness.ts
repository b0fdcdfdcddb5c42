/**
 * Kill -9 harness: a child process runs the durability workflow on a FileRunStore (or a
 * SqlRunStore on one SQLite file); the parent
 * SIGKILLs it at a random moment of the run, then resumes in a new process (killing that one
 * too, sometimes) until the run finishes. Then it checks what matters:
 * - the result equals the uninterrupted run's;
 * - no finished tool ran again: after each kill, the only call a new process may start again
 *   is the one that was in flight (at-least-once for it, same idempotency key);
 * - no checkpoint was torn (reading it never fails), the event log reads back once the run is
 *   over, and no process hung.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { mkdirSync } from "node:fs";
import { FileRunStore } from "../../src/persistence/file-run-store.js";
import type { RunStore } from "../../src/persistence/run-store.js";
import { SqlRunStore } from "../../src/persistence/sql-run-store.js";
import { createPrng } from "../../src/clients/prng.js";
import { nodeArgs } from "./node-args.js";

const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), "durability-child.ts");
export const EXPECTED_RESULT = { total: 36 };
/** A child that takes longer than this is a hang. */
const CHILD_TIMEOUT_MS = 30_000;

export interface KillOptions {
  seed?: number;
  maxKillMs?: number;
  store?: StoreKind;
  leaseMs?: number;
  onRun?: (done: number) => void;
  /** The child's module: durability-child.ts (run through tsx) by default, or its built .js twin. */
  childModule?: string;
}

export interface KillReport {
  kills: number;
  /** Runs that reached the uninterrupted result. */
  completed: number;
  /** Finished tool calls started again after a kill (must be 0). */
  finishedReexecuted: number;
  /** In-flight calls that ran again after a kill (allowed: at-least-once). */
  inFlightReexecuted: number;
  /** Calls started again after their outcome was durable in the store (must be 0). */
  recordedReexecuted: number;
  tornCheckpoints: number;
  /** Event logs that no longer read back after a kill (a torn line must not glue to the next). */
  corruptLogs: number;
  hangs: number;
  wrongResults: number;
  processes: number;
  /** What the first failed or wrong run printed (stderr or its result), for diagnosis. */
  firstFailure?: string;
}

export type StoreKind = "file" | "sql";

/** The store the child and the checks use: a directory, or one SQLite file inside it. */
export async function openStore(kind: StoreKind, dir: string, options: { leaseMs?: number } = {}): Promise<RunStore> {
  if (kind === "file") return new FileRunStore({ dir, ...options });
  mkdirSync(dir, { recursive: true });
  return new SqlRunStore({ url: `file:${path.join(dir, "runs.db")}`, ...options });
}

interface ChildOutcome {
  killed: boolean;
  result?: unknown;
  hung: boolean;
  stderr: string;
}

/** Start the child; once it says "ready", kill it after `killAfterMs` (undefined: let it finish). */
function runChild(kind: StoreKind, storeDir: string, runId: string, effects: string, killAfterMs: number | undefined, options: KillOptions): Promise<ChildOutcome> {
  return new Promise((resolve, reject) => {
    const { leaseMs } = options;
    const args = nodeArgs(options.childModule ?? CHILD, storeDir, runId, effects, kind, ...(leaseMs === undefined ? [] : [String(leaseMs)]));
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let killed = false;
    let hung = false;
    const hangTimer = setTimeout(() => {
      hung = true;
      child.kill("SIGKILL");
    }, CHILD_TIMEOUT_MS);
    child.stdout.on("data", (d: Buffer) => {
      const before = stdout;
      stdout += d.toString();
      if (killAfterMs !== undefined && !before.includes("ready") && stdout.includes("ready")) {
        setTimeout(() => {
          killed = child.kill("SIGKILL");
        }, killAfterMs);
      }
    });
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(hangTimer);
      const line = stdout.split("\n").find((l) => l.startsWith("{"));
      // The result printed means the run finished, even when the kill landed while it exited.
      if (line) return resolve({ killed: false, hung, result: (JSON.parse(line) as { result: unknown }).result, stderr });
      if (signal === "SIGKILL") return resolve({ killed: killed || !hung, hung, stderr });
      resolve({ killed: false, hung, stderr: stderr || `exit ${code ?? signal}` });
    });
  });
}

/** What a failed child printed that says why: its error line(s) (Node prints them above the stack), or its last lines. */
function errorLines(stderr: string): string {
  const lines = stderr.trim().split("\n");
  const errors = lines.filter((l) => /^\w*Error\b|\bcode: /.test(l.trim()));
  return (errors.length > 0 ? errors : lines.slice(-3)).join(" | ");
}

/** Each line of the side-effect log: pid, start|end, idempotency key. */
function effectsOf(file: string): { pid: string; kind: string; key: string }[] {
  let text = "";
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return [];
  }
  return text
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [pid, kind, key] = line.split(" ");
      return { pid: pid!, kind: kind!, key: key! };
    });
}

/**
 * `kills` runs, each killed once at a random moment of its first process (and, one time in
 * three, its first resume too); `maxKillMs` bounds the moment (the run takes roughly that long).
 */
export async function killHarness(kills: number, options: KillOptions = {}): Promise<KillReport> {
  const kind = options.store ?? "file";
  const prng = createPrng(options.seed ?? 7);
  const rng = () => prng.next();
  const maxKillMs = options.maxKillMs ?? 120;
  const report: KillReport = { kills: 0, completed: 0, finishedReexecuted: 0, inFlightReexecuted: 0, recordedReexecuted: 0, tornCheckpoints: 0, corruptLogs: 0, hangs: 0, wrongResults: 0, processes: 0 };
  for (let k = 0; k < kills; k++) {
    const dir = mkdtempSync(path.join(tmpdir(), "forge-kill-"));
    const storeDir = path.join(dir, "store");
    const effects = path.join(dir, "effects.log");
    const runId = `kill-${k}`;
    try {
      let killsLeft = rng() < 1 / 3 ? 2 : 1;
      let outcome: ChildOutcome | undefined;
      for (let attempt = 0; attempt < 10; attempt++) {
        const killAt = killsLeft > 0 ? Math.floor(rng() * maxKillMs) : undefined;
        outcome = await runChild(kind, storeDir, runId, effects, killAt, options);
        report.processes++;
        if (outcome.hung) report.hangs++;
        if (outcome.killed) {
          report.kills++;
          killsLeft--;
          const store = await openStore(kind, storeDir);
          try {
            await store.latest(runId);
          } catch {
            report.tornCheckpoints++;
          }
          continue;
        }
        break;
      }
      try {
        await (await openStore(kind, storeDir)).events(runId);
      } catch {
        report.corruptLogs++;
      }
      if (outcome && !outcome.killed && !outcome.hung) {
        if (JSON.stringify(outcome.result) === JSON.stringify(EXPECTED_RESULT)) report.completed++;
        else {
          report.wrongResults++;
          report.firstFailure ??= `run ${k}: ${errorLines(outcome.stderr) || JSON.stringify(outcome.result)}`;
        }
      } else if (outcome?.hung) {
        report.firstFailure ??= `run ${k}: hung; ${errorLines(outcome.stderr)}`;
      }
      // Re-executions, process by process: a key started again by a later process is allowed only
      // when it was the last call started before the kill (in flight).
      const lines = effectsOf(effects);
      const started = new Set<string>();
      const recorded = new Set<string>();
      let lastStarted: string | undefined;
      let currentPid: string | undefined;
      let inFlightAtKill: string | undefined;
      for (const line of lines) {
        if (line.pid !== currentPid) {
          currentPid = line.pid;
          inFlightAtKill = lastStarted;
        }
        if (line.kind === "recorded") recorded.add(line.key);
        if (line.kind !== "start") continue;
        if (recorded.has(line.key)) report.recordedReexecuted++;
        if (started.has(line.key)) {
          if (line.key === inFlightAtKill) report.inFlightReexecuted++;
          else report.finishedReexecuted++;
        }
        started.add(line.key);
        lastStarted = line.key;
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    options.onRun?.(k + 1);
  }
  return report;
}
