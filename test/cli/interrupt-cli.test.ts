/**
 * Ctrl-C as a person presses it: `forge-ts demo` and `forge-ts run` as child processes, sent
 * SIGINT mid-run. The run is cancelled through its signal and checkpointed, the command that
 * continues it is printed, the exit code is 130, and the printed command does continue it.
 */
import { execFile, spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it, vi } from "vitest";
import { sendJson, useFakeServers } from "../clients/support/fake-server.js";
import { ollamaChat } from "../clients/support/wire.js";
import { cliArgs } from "../support/cli.js";
import { cliCommand } from "../../src/cli-kit/cli-command.js";

const exec = promisify(execFile);
const env = { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("FORGE_"))), NO_COLOR: "1" };
const serve = useFakeServers();
const children: ReturnType<typeof spawn>[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
});

/** Start `forge-ts <args>`; `interruptWhen` decides from its stdout when to send SIGINT. */
async function interrupted(args: string[], interruptWhen: (stdout: string) => boolean | Promise<boolean>) {
  const child = spawn(process.execPath, cliArgs("src/cli/main.ts", ...args), { env });
  children.push(child);
  let stdout = "";
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  await new Promise<void>((resolve) => {
    child.stdout.on("data", async (d: Buffer) => {
      stdout += d.toString();
      if (await interruptWhen(stdout)) resolve();
    });
  });
  child.kill("SIGINT");
  return { code: await exited, stdout, stderr };
}

/** How the spawned CLI (built JavaScript, this environment) starts the commands it prints. */
const CLI = cliCommand({ source: false, env });

/** The printed `forge-ts runs …` command, run the way the tests run forge-ts. */
async function continueWith(stderr: string) {
  const line = stderr.split("\n").find((l) => l.trim().startsWith(`${CLI} runs `));
  expect(line).toBeDefined();
  const words = line!.trim().slice(CLI.length).trim().split(/\s+/); // shellWord left these paths unquoted
  return { words, ...(await exec(process.execPath, cliArgs("src/cli/main.ts", ...words), { env })) };
}

describe("Ctrl-C in a run", () => {
  it("demo: cancels through the signal, checkpoints, prints the runs retry command, exits 130", async () => {
    const store = path.join(mkdtempSync(path.join(tmpdir(), "forge-sigint-")), "store");
    // 1.5 s per model answer: the first tool result arrives after one, long before the run ends.
    const { code, stdout, stderr } = await interrupted(["demo", "--latency", "1500", "--store", store], (out) => out.includes("result  lookup_part"));
    expect(code).toBe(130);
    expect(stdout).toContain("→ cancelled");
    expect(stderr).toMatch(/run demo-\S+ interrupted and checkpointed; continue it with:/);
    const next = await continueWith(stderr);
    // The run recorded the demo's module, backend and profile: the store is all the command needs.
    expect(next.words).toEqual(["runs", "retry", expect.stringMatching(/^demo-/), "--store", store]);
    // The demo's quote needs an approval: continued outside the demo, the run now waits for it.
    expect(next.stdout).toMatch(/is waiting for a person \(1 pending\)/);
  }, 300_000);

  it("run: cancels the model call in flight, prints the runs retry command, exits 130; the command finishes the run", async () => {
    let hold = true;
    let asked = false;
    const model = await serve(async (req, res) => {
      if (req.path === "/api/tags") return sendJson(res, 200, { models: [{ name: "m" }] });
      const tool = (req.body.messages as { role: string }[]).some((m) => m.role === "tool");
      if (hold) {
        asked = true;
        // Held until the client gives up: the run is mid-call when Ctrl-C comes.
        return new Promise<void>((resolve) => res.on("close", resolve));
      }
      sendJson(res, 200, ollamaChat({ toolCalls: [tool ? { name: "finish", args: { summary: "done" } } : { name: "note", args: { text: "hi" } }] }, "m"));
    });
    const store = path.join(mkdtempSync(path.join(tmpdir(), "forge-sigint-")), "store");
    const backend = ["--backend", "ollama", "--model", "m", "--base-url", model.url, "--store", store];
    const { code, stdout, stderr } = await interrupted(["run", "test/cli/fixtures/note-workflow.ts", "take a note", ...backend], async (out) => {
      if (!out.startsWith("run ")) return false;
      await vi.waitUntil(() => asked, { timeout: 60_000, interval: 10 }); // the run is mid-call
      return true;
    });
    expect(code).toBe(130);
    const runId = /^run (\S+)/.exec(stdout)![1]!;
    expect(stderr).toContain(`run ${runId} interrupted and checkpointed; continue it with:`);
    hold = false;
    const next = await continueWith(stderr);
    expect(next.words).toEqual(["runs", "retry", runId, "--store", store]);
    expect(JSON.parse(next.stdout)).toEqual({ summary: "done" });
  }, 300_000);
});
