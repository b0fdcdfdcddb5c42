/**
 * `forge-ts run --mcp / --mcp-url / --mcp-config` as a user types it: a workflow module whose
 * createWorkflow takes server-filesystem's tools (stdio), a loopback OpenAI-compatible backend
 * whose first answer is a Hermes <tool_call> in plain text (the rescue path), and the server's
 * refusal of a path outside its directory reaching the model on the tool-error channel.
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { sendJson, startFakeServer, type FakeServer, type RecordedRequest } from "../clients/support/fake-server.js";
import { openaiCompletion } from "../clients/support/wire.js";
import { FILESYSTEM_BIN, startHttpMcpServer, type HttpMcp } from "./support/mcp-servers.js";
import { cliArgs } from "../support/cli.js";

const exec = promisify(execFile);
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("FORGE_")));
const cli = (args: string[]) => exec(process.execPath, cliArgs("src/cli/main.ts", ...args), { env: { ...env, NO_COLOR: "1" } });
const failure = (args: string[]) =>
  cli(args).then(
    () => {
      throw new Error(`forge-ts ${args.join(" ")} succeeded`);
    },
    (e: { code: number; stdout: string; stderr: string }) => e,
  );
const MODULE = "test/mcp/fixtures/files-workflow.ts";

let root: string;
let allowed: string;
let backend: FakeServer;
let http: HttpMcp;

/** The scripted model: a text tool call outside the directory, then a native one inside, then the answer. */
function reply(req: RecordedRequest): Record<string, unknown> {
  const tools = (req.body.tools as { function: { name: string } }[]).map((t) => t.function.name);
  const read = tools.find((n) => n.endsWith("read_text_file"))!;
  const said = JSON.stringify(req.body.messages);
  if (!said.includes("Access denied")) {
    const call = JSON.stringify({ name: read, arguments: { path: path.join(root, "secret.txt") } });
    return openaiCompletion({ content: `Let me look.\n<tool_call>\n${call}\n</tool_call>` });
  }
  if (!said.includes("ship on friday")) return openaiCompletion({ toolCalls: [{ name: read, args: { path: path.join(allowed, "notes.txt") } }] });
  return openaiCompletion({ toolCalls: [{ name: "answer", args: { text: "We ship on friday." } }] });
}

beforeAll(async () => {
  root = realpathSync(mkdtempSync(path.join(tmpdir(), "forge-mcp-cli-")));
  allowed = path.join(root, "allowed");
  mkdirSync(allowed);
  writeFileSync(path.join(allowed, "notes.txt"), "ship on friday\n");
  writeFileSync(path.join(root, "secret.txt"), "the vault code\n");
  backend = await startFakeServer((req, res) => {
    if (req.path === "/v1/models") return sendJson(res, 200, { object: "list", data: [{ id: "m", object: "model" }] });
    sendJson(res, 200, reply(req));
  });
  http = await startHttpMcpServer((s) => {
    s.registerTool("ping", { description: "Ping", inputSchema: { n: z.number() } }, ({ n }) => ({ content: [{ type: "text", text: `pong ${n}` }] }));
  });
});
afterAll(async () => {
  await backend?.close();
  await http?.close();
});

const model = () => ["--backend", "openai", "--base-url", `${backend.url}/v1`, "--model", "m", "--store", mkdtempSync(path.join(tmpdir(), "forge-mcp-store-"))];
const chats = () => backend.requests.filter((r) => r.path === "/v1/chat/completions");

describe("forge-ts run with MCP servers", () => {
  it("--mcp: a workflow on server-filesystem over stdio; its tool error reaches the model", async () => {
    const before = chats().length;
    const ran = await cli(["run", MODULE, "When do we ship?", "--mcp", `"${process.execPath}" "${FILESYSTEM_BIN}" "${allowed}"`, ...model(), "--run-id", "m1"]);
    expect(ran.stdout).toMatch(/^run m1\n/);
    expect(JSON.parse(ran.stdout.slice(ran.stdout.indexOf("{")))).toEqual({ text: "We ship on friday." });
    const sent = chats().slice(before);
    expect(sent).toHaveLength(3);
    // The server's tools went to the model with their schemas, unprefixed (flag servers take none).
    expect((sent[0]!.body.tools as { function: { name: string } }[]).map((t) => t.function.name)).toContain("read_text_file");
    // The rescued text call ran; the server's refusal came back on the tool-error channel.
    const toolMessages = (sent[1]!.body.messages as { role: string; content: string }[]).filter((m) => m.role === "tool");
    expect(toolMessages.at(-1)!.content).toBe(
      `[ToolError] read_text_file: Access denied - path outside allowed directories: ${path.join(root, "secret.txt")} not in ${allowed}`,
    );
  }, 300_000);

  it("--mcp-config: named servers (stdio and Streamable HTTP) with prefixes and headers", async () => {
    const config = path.join(root, "mcp.json");
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: {
          fs: { command: process.execPath, args: [FILESYSTEM_BIN, allowed], prefix: "fs_", allow: ["read_text_file"] },
          ping: { type: "http", url: http.url, headers: { "x-team": "forge" } },
        },
      }),
    );
    const before = chats().length;
    const ran = await cli(["run", MODULE, "When do we ship?", "--mcp-config", config, ...model()]);
    expect(JSON.parse(ran.stdout.slice(ran.stdout.indexOf("{")))).toEqual({ text: "We ship on friday." });
    const names = (chats()[before]!.body.tools as { function: { name: string } }[]).map((t) => t.function.name);
    expect(names).toEqual(["fs_read_text_file", "ping", "answer"]);
    expect(http.headers.some((h) => h["x-team"] === "forge")).toBe(true);
  }, 300_000);

  it("fails clearly: a module without createWorkflow (exit 2), a server that cannot start (exit 1)", async () => {
    const noFactory = await failure(["run", "test/cli/fixtures/note-workflow.ts", "hi", "--mcp", "node x.js", ...model()]);
    expect(noFactory.code).toBe(2);
    expect(noFactory.stderr).toMatch(/must export createWorkflow\(\{ mcpTools, mcpServers \}\)/);
    const dead = await failure(["run", MODULE, "hi", "--mcp", `"${process.execPath}" "${FILESYSTEM_BIN}" /nonexistent/forge-ts-dir`, ...model()]);
    expect(dead.code).toBe(1);
    expect(dead.stderr).toMatch(/^forge-ts: MCP server "mcp-1" could not be started/);
    expect(dead.stderr).toContain("[FORGE_MCP_SERVER]");
    expect(dead.stderr).toContain("None of the specified directories are accessible");
    const badConfig = await failure(["run", MODULE, "hi", "--mcp-config", path.join(root, "missing.json"), ...model()]);
    expect(badConfig.code).toBe(2);
    expect(badConfig.stderr).toMatch(/Invalid --mcp-config: cannot read/);
  }, 300_000);
});
