/**
 * `forge-ts proxy` as a process: starts on a free port in front of a loopback Ollama server,
 * prints the URLs to give a harness, serves a guarded request with the official openai SDK,
 * and shuts down cleanly on SIGINT (exit 0); bad flags exit 2.
 */
import { execFile, spawn } from "node:child_process";
import { promisify } from "node:util";
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { sendJson, useFakeServers } from "../clients/support/fake-server.js";
import { ollamaChat } from "../clients/support/wire.js";
import { proxyMain } from "../../src/cli/proxy.js";
import { cliArgs } from "../support/cli.js";
import { startProxyProcess } from "../support/proxy-process.js";
import { inProcess } from "../support/in-process-cli.js";

const run = promisify(execFile);
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("FORGE_")));
const cli = (...args: string[]) => cliArgs("src/cli/main.ts", "proxy", ...args);
const serve = useFakeServers();
const children: ReturnType<typeof spawn>[] = [];
afterEach(() => {
  // A failed assertion must not leave a proxy process behind.
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
});

describe("forge-ts proxy (CLI)", () => {
  it("serves a harness, rescuing a text-format call, and exits 0 on SIGINT", async () => {
    const backend = await serve((req, res) => {
      if (req.path === "/api/tags") return sendJson(res, 200, { models: [{ name: "qwen3:8b", modified_at: "2026-01-01T00:00:00Z" }] });
      sendJson(res, 200, ollamaChat({ content: '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>' }, "qwen3:8b"));
    });
    const proxy = await startProxyProcess(["--backend", "ollama", "--model", "qwen3:8b", "--base-url", backend.url, "--port", "0", "--context-length", "6000", "--recommended-sampling"], { ...env, NO_COLOR: "1" }, (out) => out.includes("Codex:"), children);
    const { child } = proxy;
    const url = /base URL (http:\/\/127\.0\.0\.1:\d+)\/v1/.exec(proxy.stdout())![1]!;
    const stdout = proxy.stdout();
    const stderr = proxy.stderr();
    expect(stdout).toContain("ANTHROPIC_BASE_URL=");
    expect(stdout).toContain(`OLLAMA_HOST=${url}`);
    expect(stdout).toMatch(/backend: ollama qwen3:8b at http:\/\/127\.0\.0\.1:\d+/);
    expect(stdout).toContain("backend reachable");
    // The window it enforces, and the one Codex setting that makes Codex compact before it.
    expect(stdout).toContain("window: 6000 tokens");
    expect(stdout).toContain("Codex:  model_context_window = 6000 in ~/.codex/config.toml");

    const llm = new OpenAI({ baseURL: `${url}/v1`, apiKey: "unused", maxRetries: 0 });
    const reply = await llm.chat.completions.create({
      model: "qwen3:8b",
      messages: [{ role: "user", content: "Weather in Oslo?" }],
      tools: [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } }],
    });
    expect(reply.choices[0]!.message.tool_calls?.[0]).toMatchObject({ type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } });
    // --context-length replaces asking Ollama (/api/show), and caps the num_ctx it is sent.
    expect(backend.to("/api/show")).toHaveLength(0);
    expect(backend.to("/api/chat")[0]!.body.options.num_ctx).toBe(4096);
    // --recommended-sampling: qwen3's card values go with each request, and nothing hints at them.
    expect(backend.to("/api/chat")[0]!.body.options).toMatchObject({ temperature: 0.6, top_p: 0.95, top_k: 20, min_p: 0 });
    expect(stderr).not.toContain("Recommended sampling values exist");

    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    child.kill("SIGINT");
    expect(await exited).toBe(0);
    expect(proxy.stdout()).toContain("SIGINT, draining");
  }, 120_000);

  it("exits 2 on a bad flag with one line on stderr (the process)", async () => {
    const error = (await run(process.execPath, cli("--model", "m"), { env }).catch((e: unknown) => e)) as { code: number; stderr: string };
    expect(error.code).toBe(2);
    expect(error.stderr.trim().split("\n")).toHaveLength(1);
    expect(error.stderr).toContain("--backend");
  }, 120_000);

  it.each([
    [["--backend", "ollama"], "--model"],
    [["--backend", "sim", "--model", "m"], "needs a real backend"],
    [["--backend", "ollama", "--model", "m", "--port", "70000"], "--port"],
    [["--backend", "ollama", "--model", "m", "--max-retries", "-1"], "--max-retries"],
    [["--backend", "ollama", "--model", "m", "--frobnicate"], "frobnicate"],
    [["--backend", "ollama", "--model", "m", "--timeout", "0"], "--timeout"],
    [["--backend", "ollama", "--model", "m", "--context-length", "lots"], "--context-length"],
    [["--backend", "openai", "--model", "m", "--forward-auth", "--api-key", "k"], "cannot be combined with --api-key"],
    [["--backend", "openai", "--model", "m", "--base-url", "http://127.0.0.1:1/v1", "--recommended-sampling"], "the openai backend takes no model-card sampling values"],
    [["--backend", "ollama", "--model", "mystery:1b", "--recommended-sampling"], 'no model-card sampling values for "mystery:1b"'],
    [["--config", "proxy.json", "--recommended-sampling"], "cannot be combined with --recommended-sampling"],
    [["--backend", "llamaserver", "--model", "m", "--port", "8080"], "http://127.0.0.1:8080/v1 is this proxy's own address (--port 8080)"],
    [["--backend", "ollama", "--model", "m", "--base-url", "http://localhost:9000", "--port", "9000"], "is this proxy's own address"],
  ])("exits 2 on bad flags %j", async (args, message) => {
    const { code, stderr } = await inProcess((a) => proxyMain(a), args);
    expect(code).toBe(2);
    expect(stderr).toContain(message);
  });

  it("prints its help with the real command name", async () => {
    const { stdout } = await run(process.execPath, cli("--help"), { env });
    expect(stdout).toContain("Usage: forge-ts proxy --backend");
    for (const text of ["GET /metrics", "--trace-content", "--context-length <tokens>", "FORGE_CONTEXT_LENGTH"]) expect(stdout).toContain(text);
  }, 120_000);
});
