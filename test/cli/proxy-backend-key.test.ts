/**
 * `--backend-api-key` (and FORGE_BACKEND_API_KEY) reaches every backend of `forge-ts proxy`:
 * llama-server started with --api-key and Ollama behind a bearer-checking reverse proxy answer
 * a chat through the proxy (200), and every request the proxy makes of them — start-up model
 * list, window, chat, the Ollama door's pass-through — carries the key. OPENAI_API_KEY goes to
 * the openai backend only. A key that cannot apply (the simulated model) exits 2 with one line.
 */
import { execFile, spawn } from "node:child_process";
import { EventEmitter } from "node:events";
import { promisify } from "node:util";
import { afterEach, describe, expect, it, vi } from "vitest";
import { demoMain } from "../../src/cli/demo.js";
import { mcpMain } from "../../src/cli/mcp.js";
import { proxyMain } from "../../src/cli/proxy.js";
import { runMain } from "../../src/cli/runs.js";
import { KEYED_WINDOW, useKeyedServers } from "../clients/support/keyed-server.js";
import { cliArgs } from "../support/cli.js";
import { startProxyProcess } from "../support/proxy-process.js";
import { inProcess } from "../support/in-process-cli.js";

const run = promisify(execFile);
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("FORGE_") && k !== "OPENAI_API_KEY" && k !== "ANTHROPIC_API_KEY"));
const cli = (...args: string[]) => cliArgs("src/cli/main.ts", "proxy", ...args);
const serve = useKeyedServers();
const children: ReturnType<typeof spawn>[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

const chatBody = (extra: Record<string, unknown> = {}) => ({ model: "test-model", messages: [{ role: "user", content: "hi" }], ...extra });
const post = (url: string, body: unknown) => fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

/**
 * `proxyMain` in this process until `stop()`: its URL once it has printed its start-up lines,
 * and what it printed. FORGE_* variables are the test's own (vi.stubEnv).
 */
async function proxyInProcess(args: readonly string[]): Promise<{ url: string; output: () => string; stop: () => Promise<number> }> {
  const lines: string[] = [];
  // "window:" is the last start-up line: the model list and the window were asked by then.
  let started!: () => void;
  const ready = new Promise<void>((resolve) => (started = resolve));
  const capture = (...parts: unknown[]) => {
    const line = parts.map(String).join(" ");
    lines.push(line);
    if (line.startsWith("  window:")) started();
  };
  for (const method of ["log", "error", "warn"] as const) vi.spyOn(console, method).mockImplementation(capture);
  const signals = new EventEmitter();
  const done = proxyMain(args, signals);
  const exitedEarly = done.then((code) => Promise.reject(new Error(`proxy exited ${code}: ${lines.join("\n")}`)));
  await Promise.race([ready, exitedEarly]);
  const url = /listening on (http:\/\/\S+)/.exec(lines.join("\n"))![1]!;
  return { url, output: () => lines.join("\n"), stop: () => (signals.emit("SIGINT"), done) };
}

describe("forge-ts proxy --backend-api-key", () => {
  it("llama-server started with --api-key answers a chat through the proxy (the process)", async () => {
    const backend = await serve("llamaserver", ["k"]);
    const proxy = await startProxyProcess(["--backend", "llamaserver", "--model", "test-model", "--base-url", backend.baseUrl, "--backend-api-key", "k", "--port", "0"], { ...env, NO_COLOR: "1" }, (out) => out.includes("window:"), children);
    const { child } = proxy;
    const stdout = proxy.stdout();
    const url = /base URL (http:\/\/127\.0\.0\.1:\d+)\/v1/.exec(stdout)![1]!;
    expect(stdout).toContain("backend reachable: 1 model(s)");
    // /props answered with the key: the window is llama-server's n_ctx, not "unknown".
    expect(stdout).toContain(`window: ${KEYED_WINDOW} tokens`);
    const res = await post(`${url}/v1/chat/completions`, chatBody());
    expect(res.status).toBe(200);
    expect(((await res.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content).toBe("hello");
    expect(new Set(backend.requests.map((r) => r.path))).toEqual(new Set(["/v1/models", "/props", "/v1/chat/completions"]));
    expect(backend.refused()).toEqual([]);
    expect(new Set(backend.auths())).toEqual(new Set(["Bearer k"]));
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    child.kill("SIGINT");
    expect(await exited).toBe(0);
  }, 120_000);

  it("Ollama behind a bearer proxy, key from FORGE_BACKEND_API_KEY: chat on each door, and /api/tags, /api/show, /api/generate passed through with it", async () => {
    const backend = await serve("ollama", ["k"]);
    vi.stubEnv("FORGE_BACKEND_API_KEY", "k");
    const proxy = await proxyInProcess(["--backend", "ollama", "--model", "test-model", "--base-url", backend.baseUrl, "--port", "0"]);
    try {
      expect(proxy.output()).toContain("backend reachable: 1 model(s)");
      expect(proxy.output()).toContain(`window: ${KEYED_WINDOW} tokens`);
      expect((await post(`${proxy.url}/v1/chat/completions`, chatBody())).status).toBe(200);
      expect((await post(`${proxy.url}/v1/chat/completions`, chatBody({ stream: true }))).status).toBe(200);
      const ollamaChat = await post(`${proxy.url}/api/chat`, chatBody({ stream: false }));
      expect(ollamaChat.status).toBe(200);
      expect(await ollamaChat.json()).toMatchObject({ message: { content: "hello" }, done: true });
      expect((await fetch(`${proxy.url}/api/tags`)).status).toBe(200);
      expect((await post(`${proxy.url}/api/show`, { model: "test-model" })).status).toBe(200);
      const generated = await post(`${proxy.url}/api/generate`, { model: "test-model", prompt: "hi", stream: false });
      expect(generated.status).toBe(200);
      expect(await generated.json()).toMatchObject({ response: "hello" });
    } finally {
      expect(await proxy.stop()).toBe(0);
    }
    expect(new Set(backend.requests.map((r) => r.path))).toEqual(new Set(["/api/tags", "/api/show", "/api/chat", "/api/generate"]));
    expect(backend.refused()).toEqual([]);
    expect(new Set(backend.auths())).toEqual(new Set(["Bearer k"]));
  });

  it("OPENAI_API_KEY is not sent to llama-server (its 401 comes back as the proxy's 502); the openai backend still takes it", async () => {
    vi.stubEnv("OPENAI_API_KEY", "sk-openai");
    const llama = await serve("llamaserver", ["sk-openai"]);
    const local = await proxyInProcess(["--backend", "llamaserver", "--model", "test-model", "--base-url", llama.baseUrl, "--port", "0"]);
    try {
      expect((await post(`${local.url}/v1/chat/completions`, chatBody())).status).toBe(502);
    } finally {
      await local.stop();
    }
    expect(llama.requests.length).toBeGreaterThan(0);
    expect(llama.auths().every((a) => a === undefined)).toBe(true);

    const vllm = await serve("vllm", ["sk-openai"]);
    const remote = await proxyInProcess(["--backend", "openai", "--model", "test-model", "--base-url", vllm.baseUrl, "--port", "0"]);
    try {
      expect((await post(`${remote.url}/v1/chat/completions`, chatBody())).status).toBe(200);
    } finally {
      await remote.stop();
    }
    expect(new Set(vllm.auths())).toEqual(new Set(["Bearer sk-openai"]));
  });

  it("--forward-auth: a caller's key replaces --backend-api-key per request; without one the backend's own goes", async () => {
    const backend = await serve("llamaserver", ["k", "caller"]);
    const proxy = await proxyInProcess(["--backend", "llamaserver", "--model", "test-model", "--base-url", backend.baseUrl, "--backend-api-key", "k", "--forward-auth", "--port", "0"]);
    try {
      const asCaller = await fetch(`${proxy.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer caller" }, body: JSON.stringify(chatBody()) });
      expect(asCaller.status).toBe(200);
      expect((await post(`${proxy.url}/v1/chat/completions`, chatBody())).status).toBe(200);
    } finally {
      await proxy.stop();
    }
    expect(backend.to("/v1/chat/completions").map((r) => r.headers.authorization)).toEqual(["Bearer caller", "Bearer k"]);
  });

  it("exits 2 with one line on stderr for a key the simulated model cannot take (the process)", async () => {
    const error = (await run(process.execPath, cli("--backend", "sim", "--model", "clean", "--backend-api-key", "k"), { env }).catch((e: unknown) => e)) as { code: number; stderr: string };
    expect(error.code).toBe(2);
    expect(error.stderr.trim().split("\n")).toHaveLength(1);
    expect(error.stderr).toContain("needs a real backend");
  }, 120_000);

  const MODULE = "test/cli/fixtures/weather-workflow.ts";
  const MAINS: Record<string, (args: readonly string[]) => Promise<number>> = { proxy: (a) => proxyMain(a), run: (a) => runMain(a), mcp: (a) => mcpMain(a, "test"), demo: (a) => demoMain(a) };
  it.each([
    ["proxy", ["--backend", "sim", "--model", "clean", "--backend-api-key", "k"], "Invalid --backend: the proxy needs a real backend"],
    ["proxy", ["--backend", "llamaserver", "--model", "m", "--backend-api-key", "k\r"], "Invalid --backend-api-key: contains a line break"],
    ["run", [MODULE, "Is it warm?", "--var", "team=ops", "--backend", "sim", "--api-key", "k"], "Invalid --api-key: the simulated model (--backend sim) has no server to send a key to"],
    ["mcp", ["--workflow", MODULE, "--backend", "sim", "--backend-api-key", "k", "--http", "--port", "0"], "Invalid --backend-api-key: the simulated model (--backend sim)"],
    ["demo", ["--backend", "sim", "--api-key", "k"], "Invalid --api-key: the simulated model (--backend sim)"],
  ])("%s %j exits 2 with one stderr line", async (command, args, message) => {
    const main = MAINS[command]!;
    const { code, stderr } = await inProcess(main, args);
    expect(code).toBe(2);
    expect(stderr.split("\n")).toHaveLength(1);
    expect(stderr).toContain(message);
  });
});
