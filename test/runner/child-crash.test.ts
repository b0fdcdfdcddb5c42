/**
 * Done-when of workflows as tools: a caller running a child workflow as a tool survives
 * `kill -9` mid-child (after the child's first tool is recorded, before its second starts), and
 * a new process resumes both without re-running a recorded tool of either.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { FileRunStore } from "../../src/persistence/file-run-store.js";
import { childRunsOf } from "../../src/runner/child-links.js";
import { builtModule } from "../support/cli.js";

const PROCESS = path.join(path.dirname(fileURLToPath(import.meta.url)), "support", "child-crash-process.ts");

interface Ended {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Run the process; with `killOn`, SIGKILL it as soon as it prints that line. */
function runProcess(args: string[], killOn?: string): Promise<Ended> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [builtModule(PROCESS), ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    const hang = setTimeout(() => child.kill("SIGKILL"), 30_000);
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
      if (killOn && stdout.includes(killOn)) child.kill("SIGKILL");
    });
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(hang);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** `<pid> <kind> <key> ...` lines of the side-effect log. */
function effects(file: string): { pid: string; kind: string; key: string; tool?: string }[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [pid, kind, key, tool] = line.split(" ");
      return { pid: pid!, kind: kind!, key: key!, ...(tool ? { tool } : {}) };
    });
}

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("a workflow tool under kill -9", () => {
  it("resumes the caller and its child without re-running the child's recorded tools", async () => {
    dir = mkdtempSync(path.join(tmpdir(), "forge-child-kill-"));
    const storeDir = path.join(dir, "store");
    const log = path.join(dir, "effects.log");

    const first = await runProcess([storeDir, log, "first"], "mid-child");
    expect(first.signal, first.stderr).toBe("SIGKILL");
    const store = new FileRunStore({ dir: storeDir });
    const beforeKill = effects(log);
    // Killed with the child's first tool done and recorded, its second not started.
    expect(beforeKill.filter((e) => e.kind === "start").map((e) => e.tool)).toEqual(["note", "step1"]);
    expect(beforeKill.filter((e) => e.kind === "recorded").map((e) => e.key)).toEqual(["p:1:0", "p.1-1:1:0"]);
    expect(await store.latest("p")).toMatchObject({ state: "executingTools.running", status: "active" });
    expect(await store.latest("p.1-1")).toMatchObject({ status: "active" });

    const second = await runProcess([storeDir, log, "resume"]);
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout.trim().split("\n").at(-1)!)).toEqual({ result: '{"summary":"step1 did 1 + step2 did 2"}' });

    // Every tool of either run started exactly once, across both processes.
    const starts = effects(log).filter((e) => e.kind === "start");
    expect(starts.map((e) => `${e.tool} ${e.key}`)).toEqual(["note p:1:0", "step1 p.1-1:1:0", "step2 p.1-1:2:0", "report p.1-1:3:0"]);
    expect(new Set(starts.slice(2).map((e) => e.pid)).size).toBe(1);
    expect(starts[2]!.pid).not.toBe(starts[0]!.pid);
    expect(await store.latest("p")).toMatchObject({ state: "done", status: "done" });
    expect(await childRunsOf(store, "p")).toMatchObject([{ runId: "p.1-1", workflow: "research", state: "done" }]);
  }, 300_000);
});
