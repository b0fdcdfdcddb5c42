/**
 * Time travel from the command line: `runs show --history` lists the commits, `runs fork --at`
 * starts a new run from one (a message reworded, a pending call's args edited), the fork goes
 * its own way under its own id, and the parent stays exactly as it was.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeServer } from "../clients/support/fake-server.js";
import { CLI, cliSession, MODULE, startRefundModel } from "./support/refund-cli.js";

let ollama: FakeServer;
beforeAll(async () => {
  ollama = await startRefundModel();
});
afterAll(() => ollama.close());

type History = { seq: number; state: string; status: string }[];

describe("forge-ts runs fork", () => {
  it("forks a waiting run from its first commit with a reworded message, and from its wait with edited args", async () => {
    const { store, cli, failure, backend, refunds } = cliSession(ollama);
    const out = (await cli(["run", MODULE, "refund order A1", ...backend, "--run-id", "p"])).stdout;
    const callId = /^ {2}(\S+) {2}refund/m.exec(out)![1]!;
    const parent = JSON.parse((await cli(["runs", "show", "p", "--history", "--events", "--json", "--store", store])).stdout) as { history: History };
    expect(parent.history.map((c) => [c.seq, c.state, c.status])).toEqual([
      [1, "inferring", "active"],
      [2, "awaitingHuman", "waiting"],
    ]);
    const table = (await cli(["runs", "show", "p", "--history", "--store", store])).stdout;
    expect(table).toMatch(/^seq +state +status +iteration +messages +saved +forkable$/m);
    expect(table).toMatch(/^2 +awaitingHuman +waiting +1 +3 +\S+ +yes$/m);

    // From before the model answered, with the user's message reworded: the fork asks instead.
    const forked = await cli(["runs", "fork", "p", "--at", "1", "--patch-message", "1=ask me first", "--run-id", "f-ask", "--store", store]);
    // A fork continues with what its parent recorded: no --workflow, --backend or --model to fill in.
    expect(forked.stdout).toBe(`run f-ask\nforked from run p at commit 1 (inferring); continue with: ${CLI} runs resume f-ask --store ${store}\n`);
    const asked = await cli(["runs", "resume", "f-ask", "--store", store]);
    expect(asked.stdout).toMatch(/run f-ask is waiting for a person \(1 pending\):\n {2}\S+ {2}ask_user {2}input/);

    // From the wait, with the refund's amount edited (checked against the workflow's schema).
    const bad = await failure(["runs", "fork", "p", "--at", "2", "--patch-args", `${callId}={"order":"A1","amount":-1}`, "--workflow", MODULE, "--store", store]);
    expect([bad.code, bad.stderr]).toEqual([2, expect.stringMatching(/patch\.args.*amount/)]);
    const edited = await cli(["runs", "fork", "p", "--at", "2", "--patch-args", `${callId}={"order":"A1","amount":150}`, "--run-id", "f-150", "--workflow", MODULE, "--store", store]);
    expect(edited.stdout).toContain("forked from run p at commit 2 (awaitingHuman); it waits for a person");
    const shown = (await cli(["runs", "show", "f-150", "--store", store])).stdout;
    expect(shown).toContain("forked from run p at commit 2");
    expect(shown).toContain(`  ${callId}  refund  approval  {"order":"A1","amount":150}  asked `);
    await cli(["runs", "approve", "f-150", "--store", store]);
    expect(JSON.parse((await cli(["runs", "resume", "f-150", "--workflow", MODULE, ...backend])).stdout)).toEqual({ summary: "refunded 150 on A1" });
    expect(refunds()).toEqual([{ order: "A1", amount: 150, key: expect.stringMatching(/^f-150:/) }]);

    // The parent did not move: same commits, same events, still waiting on the 500.
    expect(JSON.parse((await cli(["runs", "show", "p", "--history", "--events", "--json", "--store", store])).stdout)).toEqual(parent);

    // A final commit is refused with the nearest one to fork from; a fork has no start to replay.
    const last = (JSON.parse((await cli(["runs", "show", "f-150", "--json", "--store", store])).stdout) as { seq: number }).seq;
    const final = await failure(["runs", "fork", "f-150", "--at", String(last), "--store", store]);
    expect([final.code, final.stderr]).toEqual([2, expect.stringMatching(new RegExp(`commit ${last} of run f-150 is final \\(done\\).*nearest earlier commit a fork can start from is ${last - 1}`))]);
    expect((await failure(["runs", "fork", "p", "--patch-message", "x=hi", "--at", "1", "--store", store])).stderr).toMatch(/--patch-message.*message index/);
    expect((await failure(["runs", "fork", "p", "--store", store])).stderr).toMatch(/--at/);
    expect((await failure(["runs", "replay", "f-150", "--workflow", MODULE, "--store", store])).stderr).toMatch(/is a fork of run p at commit 2/);
  }, 300_000);
});
