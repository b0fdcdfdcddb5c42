/**
 * A person in the loop from the command line, each step its own process: `forge-ts run` stops
 * waiting on a tool that needs an approval, `runs approve|reject|answer` decide from another
 * process, `runs resume` finishes the run; the approved tool runs exactly once. The model is a
 * loopback server speaking Ollama's /api/chat that answers from the conversation it is sent
 * (support/refund-cli.ts).
 */
import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeServer } from "../clients/support/fake-server.js";
import { cliArgs } from "../support/cli.js";
import { CLI, cliSession, MODULE, startRefundModel, type Msg } from "./support/refund-cli.js";

let ollama: FakeServer;
beforeAll(async () => {
  ollama = await startRefundModel();
});
afterAll(() => ollama.close());

/** `forge-ts run` in its own process, killed with SIGKILL once it reports the wait (if it has not exited by then). */
function runUntilWaiting(args: string[], childEnv: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, cliArgs("src/cli/main.ts", "run", ...args), { env: childEnv, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString();
      if (out.includes("then:") && child.exitCode === null) child.kill("SIGKILL");
    });
    child.stderr.on("data", (c: Buffer) => (err += c.toString()));
    child.on("close", (code, signal) => (code === 0 || signal === "SIGKILL" ? resolve(out) : reject(new Error(`run exited ${code}: ${err}`))));
  });
}

describe("forge-ts runs approve | reject | answer", () => {
  it("run waits, is killed, approved from another process, resumed: the tool ran exactly once", async () => {
    const { store, childEnv, cli, failure, backend, refunds } = cliSession(ollama);
    const out = await runUntilWaiting([MODULE, "refund order A1", ...backend, "--run-id", "r-ok"], childEnv);
    expect(out).toMatch(/^run r-ok\nrun r-ok is waiting for a person \(1 pending\):\n {2}(\S+) {2}refund {2}approval {2}\{"order":"A1","amount":500\} {2}asked \d{4}-/);
    const callId = /^ {2}(\S+) {2}refund/m.exec(out)![1]!;
    expect(out).toContain(`decide: ${CLI} runs approve r-ok ${callId} [--args <json>] --store ${store}`);
    // The run recorded its module, backend, model and URL: the command that continues it needs only the store.
    expect(out).toContain(`then:   ${CLI} runs resume r-ok --store ${store}`);
    expect(refunds()).toEqual([]);

    expect((await cli(["runs", "list", "--status", "waiting", "--store", store])).stdout).toMatch(/r-ok +refunds +- +awaitingHuman +waiting/);
    expect((await cli(["runs", "list", "--status", "active", "--store", store])).stdout).toContain("no runs in");
    const shown = await cli(["runs", "show", "r-ok", "--store", store]);
    expect(shown.stdout).toContain(`  ${callId}  refund  approval  {"order":"A1","amount":500}  asked `);

    const approved = await cli(["runs", "approve", "r-ok", "--store", store]);
    expect(approved.stdout.trim()).toBe(`approved refund (call ${callId}) on run r-ok; still pending: none; continue with: ${CLI} runs resume r-ok --store ${store}`);
    expect((await cli(["runs", "approve", "r-ok", callId, "--store", store])).stdout).toMatch(/^already recorded: approve of refund/);
    const conflict = await failure(["runs", "reject", "r-ok", callId, "--reason", "changed my mind", "--store", store]);
    expect(conflict.code).toBe(2);
    expect(conflict.stderr.trim()).toMatch(/^forge-ts: call \S+ \(refund\) was already decided: approve \[FORGE_HUMAN_DECISION\]$/);
    expect((await cli(["runs", "show", "r-ok", "--store", store])).stdout).toContain(`decided ${callId} (refund): approve, applied when the run is resumed`);

    // The printed command, run as printed (after the words that start forge-ts).
    const resumed = await cli(approved.stdout.trim().split("continue with: ")[1]!.slice(CLI.length).trim().split(/\s+/));
    expect(JSON.parse(resumed.stdout)).toEqual({ summary: "refunded 500 on A1" });
    await cli(["runs", "resume", "r-ok", "--workflow", MODULE, ...backend]);
    expect(refunds().map(({ order, amount }) => ({ order, amount }))).toEqual([{ order: "A1", amount: 500 }]);
  }, 300_000);

  it("a rejection reaches the model, which recovers; answers and bad decisions", async () => {
    const { store, cli, failure, backend, refunds } = cliSession(ollama);
    expect((await cli(["run", MODULE, "refund order A1", ...backend, "--run-id", "r-no"])).stdout).toContain("is waiting for a person");
    const rejected = await cli(["runs", "reject", "r-no", "--reason", "over the limit without a receipt", "--json", "--store", store]);
    expect(JSON.parse(rejected.stdout)).toMatchObject({ runId: "r-no", tool: "refund", duplicate: false, pending: [] });
    const resumed = await cli(["runs", "resume", "r-no", "--workflow", MODULE, ...backend]);
    expect(JSON.parse(resumed.stdout)).toEqual({ summary: "refunded 100 on A1" });
    expect(refunds().map((r) => r.amount)).toEqual([100]);
    const sawReason = ollama.to("/api/chat").some((r) => (r.body.messages as Msg[]).some((m) => m.role === "tool" && m.content.includes("over the limit without a receipt")));
    expect(sawReason).toBe(true);

    // A question for a person: answered with JSON; bad decisions exit 2 with one line.
    expect((await cli(["run", MODULE, "ask me first", ...backend, "--run-id", "r-ask"])).stdout).toMatch(/ask_user {2}input {2}\{"question":"Which order\?"\}/);
    const wrongKind = await failure(["runs", "approve", "r-ask", "--store", store]);
    expect([wrongKind.code, wrongKind.stderr.trim().split("\n").length]).toEqual([2, 1]);
    expect(wrongKind.stderr).toMatch(/asks a question: answer it/);
    expect((await failure(["runs", "reject", "r-ask", "--store", store])).stderr).toMatch(/--reason.*needs a reason/);
    expect((await failure(["runs", "approve", "r-ask", "--args", "[1]", "--store", store])).code).toBe(2);
    expect((await failure(["runs", "approve", "nope", "--store", store])).stderr).toContain("no run nope");
    expect((await cli(["runs", "answer", "r-ask", "--answer", '{"order":"Z9"}', "--store", store])).stdout).toMatch(/^answered ask_user/);
    const answered = await cli(["runs", "resume", "r-ask", "--workflow", MODULE, ...backend]);
    expect(JSON.parse(answered.stdout)).toEqual({ summary: 'answered {"order":"Z9"}' });
    const notWaiting = await failure(["runs", "answer", "r-ask", "--answer", "again", "--store", store]);
    expect([notWaiting.code, notWaiting.stderr]).toEqual([2, expect.stringMatching(/has no pending request/)]);
  }, 300_000);
});
