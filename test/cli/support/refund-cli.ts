/**
 * What the human-in-the-loop CLI tests share: a loopback server speaking Ollama's /api/chat that
 * answers from the conversation it is sent (refund A1 for 500, which needs an approval; after a
 * rejection, for 100, which does not; `ask_user` when the user says "ask"; then finish with
 * what the last tool said), and `forge-ts` as a child process on a fresh store.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { ollamaChat, type ModelReply } from "../../clients/support/wire.js";
import { sendJson, startFakeServer, type FakeServer } from "../../clients/support/fake-server.js";
import { builtModule, cliArgs } from "../../support/cli.js";
import { cliCommand } from "../../../src/cli-kit/cli-command.js";

const exec = promisify(execFile);
/** How the spawned CLI (built JavaScript, this process's environment) starts the commands it prints. */
export const CLI = cliCommand({ source: false });

/** The fixture workflow as the spawned CLI loads it (its built twin): the path it prints back. */
export const MODULE = builtModule("test/fixtures/approval-workflow.ts");

export type Msg = { role: string; content: string };

function reply(messages: Msg[]): ModelReply {
  const user = messages.find((m) => m.role === "user")?.content ?? "";
  const tool = messages.filter((m) => m.role === "tool").at(-1)?.content;
  if (tool === undefined) return { toolCalls: user.includes("ask") ? [{ name: "ask_user", args: { question: "Which order?" } }] : [{ name: "refund", args: { order: "A1", amount: 500 } }] };
  if (tool.startsWith("[Rejected]")) return { toolCalls: [{ name: "refund", args: { order: "A1", amount: 100 } }] };
  return { toolCalls: [{ name: "finish", args: { summary: tool.startsWith("refunded") ? tool : `answered ${tool}` } }] };
}

export function startRefundModel(): Promise<FakeServer> {
  return startFakeServer((req, res) => {
    if (req.path === "/api/tags") return sendJson(res, 200, { models: [{ name: "refund-model" }] });
    sendJson(res, 200, ollamaChat(reply(req.body.messages as Msg[]), "refund-model"));
  });
}

/** A fresh store and tool log, `forge-ts` on them, and the backend flags for `model`. */
export function cliSession(model: FakeServer) {
  const dir = mkdtempSync(path.join(tmpdir(), "forge-cli-human-"));
  const store = path.join(dir, "store");
  const toolLog = path.join(dir, "tool.log");
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("FORGE_")));
  const childEnv: NodeJS.ProcessEnv = { ...env, NO_COLOR: "1", FORGE_TEST_TOOL_LOG: toolLog };
  const cli = (args: string[]) => exec(process.execPath, cliArgs("src/cli/main.ts", ...args), { env: childEnv });
  const failure = (args: string[]) =>
    cli(args).then(
      () => {
        throw new Error(`forge-ts ${args.join(" ")} succeeded`);
      },
      (e: { code: number; stdout: string; stderr: string }) => e,
    );
  const backend = ["--backend", "ollama", "--model", "refund-model", "--base-url", model.url, "--store", store];
  /** The refunds that ran, in order, from the fixture's tool log. */
  const refunds = () =>
    existsSync(toolLog) ? readFileSync(toolLog, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { order: string; amount: number; key: string }) : [];
  return { store, childEnv, cli, failure, backend, refunds };
}
