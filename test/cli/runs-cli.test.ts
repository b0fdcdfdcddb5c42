/**
 * `forge-ts run` and `forge-ts runs` as a user types them: a workflow module, a loopback server
 * speaking Ollama's /api/chat, a store directory; bad flags, unknown runs and a dead backend.
 */
import { execFile } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ollamaChat } from "../clients/support/wire.js";
import { sendJson, startFakeServer, type FakeServer } from "../clients/support/fake-server.js";
import { runMain, runsMain } from "../../src/cli/runs.js";
import { cliArgs } from "../support/cli.js";
import { inProcess } from "../support/in-process-cli.js";

const exec = promisify(execFile);
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("FORGE_")));
const cli = (args: string[]) => exec(process.execPath, cliArgs("src/cli/main.ts", ...args), { env: { ...env, NO_COLOR: "1" } });
const failure = (args: string[]) => cli(args).then(
  () => {
    throw new Error(`forge-ts ${args.join(" ")} succeeded`);
  },
  (e: { code: number; stdout: string; stderr: string }) => e,
);
const MODULE = "test/cli/fixtures/note-workflow.ts";

let ollama: FakeServer;
beforeAll(async () => {
  ollama = await startFakeServer((req, res) => {
    if (req.path === "/api/tags") return sendJson(res, 200, { models: [{ name: "notes-model" }] });
    const turns = (req.body.messages as { role: string }[]).filter((m) => m.role === "assistant").length;
    const reply = turns === 0 ? { toolCalls: [{ name: "note", args: { text: "hello" } }] } : { toolCalls: [{ name: "finish", args: { summary: "noted hello" } }] };
    sendJson(res, 200, ollamaChat(reply, "notes-model"));
  });
});
afterAll(() => ollama.close());

describe("forge-ts run / runs", () => {
  it("runs a workflow module into the store, then lists, shows, resumes and deletes it", async () => {
    const store = mkdtempSync(path.join(tmpdir(), "forge-cli-store-"));
    const backend = ["--backend", "ollama", "--model", "notes-model", "--base-url", ollama.url, "--store", store];
    const ran = await cli(["run", MODULE, "take a note", ...backend, "--run-id", "r1", "--session", "desk"]);
    expect(ran.stdout).toMatch(/^run r1\n/);
    expect(JSON.parse(ran.stdout.slice(ran.stdout.indexOf("{")))).toEqual({ summary: "noted hello" });

    const listed = await cli(["runs", "list", "--store", store]);
    expect(listed.stdout).toMatch(/r1 +notes +desk +done +done/);
    const shown = await cli(["runs", "show", "r1", "--events", "--store", store]);
    expect(shown.stdout).toContain('result {"summary":"noted hello"}');
    expect(shown.stdout).toContain('"type":"toolEnd"');
    expect(JSON.parse((await cli(["runs", "list", "--json", "--store", store])).stdout)).toHaveLength(1);
    expect((await cli(["runs", "list", "--status", "done", "--store", store])).stdout).toMatch(/r1 +notes/);
    expect((await cli(["runs", "list", "--status", "failed", "--store", store])).stdout).toContain("no runs in");
    const badStatus = await failure(["runs", "list", "--status", "broken", "--store", store]);
    expect(badStatus.code).toBe(2);
    expect(badStatus.stderr).toMatch(/--status.*active, waiting, done, failed, cancelled/);

    // A finished run resumes straight to its result.
    const resumed = await cli(["runs", "resume", "r1", "--workflow", MODULE, ...backend]);
    expect(JSON.parse(resumed.stdout)).toEqual({ summary: "noted hello" });
    const replayed = await cli(["runs", "replay", "r1", "--workflow", MODULE, "--store", store]);
    expect(replayed.stdout).toContain("inferring → executingTools.running → inferring → executingTools.running → done");
    expect(replayed.stdout).toContain('state done, result {"summary":"noted hello"}');
    await cli(["runs", "delete", "r1", "--store", store]);
    expect((await cli(["runs", "list", "--store", store])).stdout).toContain("no runs in");
  }, 300_000);

  it("usage errors exit 2 with one line; a dead backend exits 1 before anything runs", async () => {
    const store = mkdtempSync(path.join(tmpdir(), "forge-cli-store-"));
    const unknownRun = await failure(["runs", "show", "nope", "--store", store]);
    expect(unknownRun.code).toBe(2);
    expect(unknownRun.stderr).toContain("no run nope");
    // The other usage errors in-process (the spawn above covers the process path).
    expect((await inProcess((a) => runsMain(a), ["frobnicate", "--store", store])).code).toBe(2);
    expect(await inProcess((a) => runMain(a), [MODULE])).toMatchObject({ code: 2, stderr: expect.stringMatching(/expected <workflow-module> "<message>"/) });
    expect(await inProcess((a) => runMain(a), ["missing-module.mjs", "hi", "--backend", "ollama", "--model", "m"])).toMatchObject({ code: 2, stderr: expect.stringContaining("cannot import") });
    const dead = await failure(["run", MODULE, "hi", "--backend", "ollama", "--model", "m", "--base-url", "http://127.0.0.1:9", "--store", store]);
    expect(dead.code).toBe(1);
    expect(dead.stderr).toMatch(/unreachable/);
    expect((await cli(["runs", "--help"])).stdout).toContain("Usage: forge-ts runs");
    expect((await cli(["run", "--help"])).stdout).toContain("Usage: forge-ts run <workflow-module>");
  }, 300_000);
});
