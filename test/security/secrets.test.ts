/**
 * Secrets never leave: marker secrets in a backend URL's user-info and query, in the keys the
 * proxy and its backend are given, and echoed back by a backend, are fed through the proxy's
 * surfaces — the caller's error bodies on each door, /health, the start-up lines, the spans, the
 * logs — and through a run's stored launch record; none of them is found anywhere.
 */
import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { LlamafileClient } from "../../src/clients/llamafile.js";
import { OllamaClient } from "../../src/clients/ollama.js";
import { isCredentialParam, MIN_SECRET_LENGTH, redactText, redactUrl, registerSecret, withoutCredentials } from "../../src/core/redact.js";
import { SqlRunStore } from "../../src/persistence/sql-run-store.js";
import { createProxy } from "../../src/proxy/create-proxy.js";
import { sendJson, useFakeServers } from "../clients/support/fake-server.js";
import { cliArgs } from "../support/cli.js";
import { installTracing, resetTracing, type TestTracing } from "../support/otel.js";

const PASS = "PASSmarker7731";
const TOKEN = "TOKENmarker4412";
const KEY = "KEYmarker99120077";
const CALLER_KEY = "CALLERmarker55018833";
const MARKERS = [PASS, TOKEN, KEY, CALLER_KEY];
const serve = useFakeServers();
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("FORGE_")));

const leaks = (text: string) => MARKERS.filter((m) => text.includes(m));
const ask = JSON.stringify({ model: "qwen3:8b", max_tokens: 32, messages: [{ role: "user", content: "hi" }], input: "hi" });

describe("redaction rules", () => {
  it("a short configured key is no word to mask: only keys of MIN_SECRET_LENGTH or more are searched for", () => {
    registerSecret("secret");
    expect(redactText("/tmp/x/secret.txt")).toBe("/tmp/x/secret.txt");
    registerSecret("s".repeat(MIN_SECRET_LENGTH));
    expect(redactText(`key ${"s".repeat(MIN_SECRET_LENGTH)}`)).toBe("key ***");
  });

  it("masks user-info and credential parameters, keeps the rest", () => {
    expect(redactUrl(`http://me:${PASS}@llm.lan:8080/v1?token=${TOKEN}&model=q`)).toBe("http://me:***@llm.lan:8080/v1?token=***&model=q");
    expect(redactUrl(`https://${TOKEN}@git.example/repo`)).toBe("https://***@git.example/repo");
    expect(redactUrl(`libsql://db.turso.io?authToken=${TOKEN}`)).toBe("libsql://db.turso.io?authToken=***");
    expect(withoutCredentials(`http://me:${PASS}@h/v1?api_key=${TOKEN}&x=1`)).toBe("http://h/v1?x=1");
    expect(redactText(`No usable HTTP answer from http://u:${PASS}@h:1/api/chat?key=${TOKEN}: refused`)).toBe("No usable HTTP answer from http://u:***@h:1/api/chat?key=***: refused");
    for (const name of ["token", "api_key", "apiKey", "authToken", "access_token", "X-Amz-Signature", "sig", "password", "client_secret", "auth"]) expect([name, isCredentialParam(name)]).toEqual([name, true]);
    for (const name of ["model", "stream", "format", "keep_alive"]) expect([name, isCredentialParam(name)]).toEqual([name, false]);
  });
});

describe("marker secrets in a store URL", () => {
  it("a libSQL authToken is in no store error", async () => {
    const store = new SqlRunStore({ url: `libsql://127.0.0.1:9?authToken=${TOKEN}` });
    const error = (await store.latest("r1").catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(Error);
    expect(leaks(`${error.message} ${JSON.stringify(error)} ${String(error.stack)}`)).toEqual([]);
    await store.close();
  });
});

describe("marker secrets through the proxy", () => {
  let tracing: TestTracing;
  beforeAll(() => (tracing = installTracing()));
  afterAll(() => resetTracing());

  it("a dead backend URL with credentials: no marker in any door's 502, /health, the spans or the logs", async () => {
    const logged: string[] = [];
    const spy = vi.spyOn(console, "warn").mockImplementation((...a: unknown[]) => void logged.push(a.map(String).join(" ")));
    const spyErr = vi.spyOn(console, "error").mockImplementation((...a: unknown[]) => void logged.push(a.map(String).join(" ")));
    const client = new OllamaClient({ model: "qwen3:8b", baseUrl: `http://me:${PASS}@127.0.0.1:9/?token=${TOKEN}`, apiKey: KEY, think: false });
    const proxy = createProxy({ client, apiKey: CALLER_KEY });
    const { url } = await proxy.listen({ port: 0, host: "127.0.0.1" });
    try {
      const bodies: string[] = [];
      for (const path of ["/v1/chat/completions", "/v1/messages", "/v1/responses", "/api/chat", "/api/tags", "/api/show"]) {
        const res = await fetch(`${url}${path}`, { method: path === "/api/tags" ? "GET" : "POST", headers: { "content-type": "application/json", authorization: `Bearer ${CALLER_KEY}` }, ...(path === "/api/tags" ? {} : { body: ask }) });
        bodies.push(`${path} ${res.status} ${await res.text()}`);
      }
      expect(bodies.every((b) => / 50[24] /.test(b)), bodies.join("\n")).toBe(true);
      const health = await (await fetch(`${url}/health`)).text();
      const spans = JSON.stringify(tracing.spans().map((s) => ({ name: s.name, status: s.status, attributes: s.attributes, events: s.events })));
      for (const [where, text] of [["bodies", bodies.join("\n")], ["health", health], ["spans", spans], ["logs", logged.join("\n")]] as const) expect([where, leaks(text)]).toEqual([where, []]);
      expect(health).toContain("127.0.0.1:9");
    } finally {
      spy.mockRestore();
      spyErr.mockRestore();
      await proxy.close();
    }
  });

  it("a backend that echoes the key it refused: the caller never sees it", async () => {
    const backend = await serve((req, res) => sendJson(res, 401, { error: { message: `invalid api key ${String(req.headers.authorization)}` } }));
    const client = new LlamafileClient({ model: "m", baseUrl: `${backend.url}/v1`, mode: "native", apiKey: KEY, logger: () => {} });
    const proxy = createProxy({ client });
    const { url } = await proxy.listen({ port: 0, host: "127.0.0.1" });
    try {
      const res = await fetch(`${url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: ask });
      const text = await res.text();
      expect(res.status).toBe(502);
      expect(text).toContain("invalid api key Bearer ***");
      expect(leaks(text)).toEqual([]);
    } finally {
      await proxy.close();
    }
  });

  it("forge-ts proxy's start-up lines and warnings carry no marker", async () => {
    const child = spawn(process.execPath, cliArgs("src/cli/main.ts", "proxy", "--backend", "llamaserver", "--model", "m", "--base-url", `http://me:${PASS}@127.0.0.1:9/v1?token=${TOKEN}`, "--backend-api-key", KEY, "--api-key", CALLER_KEY, "--port", "0"), { env });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    await new Promise<void>((resolve, reject) => {
      const check = () => out.includes("window:") && resolve();
      child.stdout.on("data", check);
      child.stderr.on("data", check);
      child.once("exit", (code) => reject(new Error(`exited ${code}: ${out}`)));
    });
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGINT");
    await exited;
    expect(out).toContain("127.0.0.1:9");
    expect(leaks(out)).toEqual([]);
  }, 120_000);
});
