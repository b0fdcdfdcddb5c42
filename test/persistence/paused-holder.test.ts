/**
 * The fault leases exist for: a holder paused (SIGSTOP, as a long GC or VM pause would) past its
 * lease loses the run to another runner, which finishes it; continued (SIGCONT), the paused one's
 * next write fails with FORGE_LOCK_LOST and it starts no tool after.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it, vi } from "vitest";
import { FileRunStore } from "../../src/persistence/file-run-store.js";
import { SqlRunStore } from "../../src/persistence/sql-run-store.js";
import { builtModule } from "../support/cli.js";

const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), "support", "holder-child.ts");
// 1 s, renewed every 333 ms: a child stalled by a loaded machine keeps its lease until it is paused.
const LEASE_MS = 1_000;

/** A runner child; `stopAtStart` n: it stops itself (SIGSTOP) in the middle of its n-th tool call. */
function start(kind: string, dir: string, effects: string, stopAtStart = 0): { child: ChildProcess; output: Promise<string> } {
  const child = spawn(process.execPath, [builtModule(CHILD), kind, dir, "run-1", effects, String(LEASE_MS), "250", String(stopAtStart)], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (out += d.toString()));
  return { child, output: new Promise((resolve) => child.on("close", () => resolve(out))) };
}

const lines = (file: string) => {
  try {
    return readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => l.split(" ") as [string, string, string]);
  } catch {
    return [];
  }
};

/** The process's state letter from /proc (T: stopped). */
const stateOf = (pid: number) => readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /s, "")[0];

describe("a paused holder", () => {
  for (const kind of ["file", "sql"] as const) {
    it(`${kind} store: loses its run to another runner past its lease, and after SIGCONT fails with FORGE_LOCK_LOST starting no tool`, async () => {
      const dir = mkdtempSync(path.join(tmpdir(), "forge-paused-"));
      const effects = path.join(dir, "effects.log");
      // It stops itself in the middle of its second tool call (a test process on a loaded machine
      // could not be relied on to send SIGSTOP within the 250 ms the call takes).
      const paused = start(kind, path.join(dir, "store"), effects, 2);
      const pid = String(paused.child.pid);
      await vi.waitFor(() => expect(stateOf(paused.child.pid!)).toBe("T"), { timeout: 30_000, interval: 20 });
      expect(lines(effects).filter(([p, kind]) => p === pid && kind === "start")).toHaveLength(2);
      // The taker waits for the paused holder's lease to run out (leaseFree), as a worker would.
      const taker = start(kind, path.join(dir, "store"), effects);
      expect(await taker.output).toMatch(/^result "finish done"/m);
      const seenAtContinue = lines(effects).length;
      paused.child.kill("SIGCONT");
      const out = await paused.output;
      expect(out).toMatch(/^error FORGE_LOCK_LOST /m);
      // After SIGCONT the paused process at most finished the call it was in; it started nothing.
      const after = lines(effects).slice(seenAtContinue).filter(([p]) => p === pid);
      expect(after.filter(([, kind]) => kind === "start")).toEqual([]);
      // The taker re-ran only the call that was cut off; the run is done once, in the taker's hands.
      const starts = lines(effects).filter(([, kind]) => kind === "start").map(([, , key]) => key);
      expect(new Set(starts).size).toBe(4);
      expect(starts.length).toBe(5);
      const store = kind === "file" ? new FileRunStore({ dir: path.join(dir, "store") }) : new SqlRunStore({ url: `file:${path.join(dir, "store", "runs.db")}` });
      expect(await store.latest("run-1")).toMatchObject({ status: "done", state: "done" });
      const ends = (await store.events("run-1")).filter((e) => e.type === "toolEnd");
      expect(ends.map((e) => (e as { tool: string }).tool)).toEqual(["a", "b", "c", "finish"]);
    }, 120_000);
  }
});
