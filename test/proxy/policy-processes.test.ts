/**
 * The done-when of stateless policy: two `forge-ts proxy --policy` processes behind a
 * round-robin balancer, sharing nothing. The model calls the terminal tool too early on every
 * turn; whichever process takes a request reads the step record from its messages, nudges, and
 * the client only ever sees the correct next call.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { afterEach, expect, it } from "vitest";
import { sendJson, startFakeServer, type FakeServer, type RecordedRequest } from "../clients/support/fake-server.js";
import { openaiCompletion, type ModelReply } from "../clients/support/wire.js";
import { cliArgs } from "../support/cli.js";

const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("FORGE_")));
const open: { close(): unknown }[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
  await Promise.all(open.splice(0).map((s) => s.close()));
});

type Wire = { role: string; content: string | null };

/** After each real result the model tries to submit at once; told off, it does the next step. */
function eager(req: RecordedRequest): ModelReply {
  const messages = req.body.messages as Wire[];
  const done = messages.filter((m) => m.role === "tool" && !String(m.content).startsWith("[")).length;
  const nudged = String(messages.at(-1)!.content).startsWith("[StepEnforcementError]");
  if (!nudged && done < 2) return { toolCalls: [{ name: "submit", args: { text: "done" } }] };
  const next = ["search", "summarize", "submit"][done]!;
  return { toolCalls: [{ name: next, args: next === "search" ? { q: "x" } : next === "submit" ? { text: "done" } : {} }] };
}

async function startProxy(backend: FakeServer, policyPath: string): Promise<string> {
  const child = spawn(process.execPath, cliArgs("src/cli/main.ts", "proxy", "--backend", "openai", "--base-url", `${backend.url}/v1`, "--model", "m", "--policy", policyPath, "--port", "0"), {
    env: { ...env, OPENAI_API_KEY: "unused" },
  });
  children.push(child);
  let out = "";
  return await new Promise<string>((resolve, reject) => {
    const check = () => {
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m && out.includes("policy: search, summarize before submit")) resolve(m[1]!);
    };
    child.stdout!.on("data", (d: Buffer) => ((out += d.toString()), check()));
    child.stderr!.on("data", (d: Buffer) => (out += d.toString()));
    child.once("exit", (code) => reject(new Error(`proxy exited ${code}: ${out}`)));
  });
}

/** A round-robin balancer: request n goes to upstream n mod 2, bodies and answers piped whole. */
async function roundRobin(upstreams: string[]): Promise<{ url: string; served: number[]; server: Server }> {
  const served = upstreams.map(() => 0);
  let n = 0;
  const server = createServer((req, res) => {
    const i = n++ % upstreams.length;
    served[i]!++;
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const upstream = await fetch(`${upstreams[i]}${req.url}`, { method: req.method, headers: { "content-type": "application/json" }, body: Buffer.concat(chunks) });
      res.writeHead(upstream.status, { "content-type": upstream.headers.get("content-type") ?? "application/json" });
      res.end(Buffer.from(await upstream.arrayBuffer()));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, served, server };
}

it("two proxy processes behind a round-robin enforce one policy with no shared state", async () => {
  const backend = await startFakeServer((req, res) =>
    req.method === "GET" ? sendJson(res, 200, { object: "list", data: [{ id: "m", object: "model" }] }) : sendJson(res, 200, openaiCompletion(eager(req), "m")),
  );
  open.push(backend);
  const policyPath = join(await mkdtemp(join(tmpdir(), "forge-policy-")), "policy.json");
  await writeFile(policyPath, JSON.stringify({ requiredSteps: ["search", "summarize"], terminalTool: "submit" }));
  const [a, b] = await Promise.all([startProxy(backend, policyPath), startProxy(backend, policyPath)]);
  const lb = await roundRobin([a, b]);
  open.push({ close: () => lb.server.close() });

  const fn = (name: string, properties: Record<string, unknown> = {}): OpenAI.ChatCompletionTool => ({ type: "function", function: { name, parameters: { type: "object", properties } } });
  const tools = [fn("search", { q: { type: "string" } }), fn("summarize"), fn("submit", { text: { type: "string" } })];
  const client = new OpenAI({ baseURL: `${lb.url}/v1`, apiKey: "unused", maxRetries: 0 });
  const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: "Research, then submit." }];
  const seen: string[] = [];
  while (!seen.includes("submit") && seen.length < 6) {
    const message = (await client.chat.completions.create({ model: "m", messages, tools })).choices[0]!.message;
    messages.push(message);
    for (const call of message.tool_calls ?? []) {
      if (call.type !== "function") continue;
      seen.push(call.function.name);
      messages.push({ role: "tool", tool_call_id: call.id, content: `${call.function.name}: ok` });
    }
  }
  expect(seen).toEqual(["search", "summarize", "submit"]);
  expect(lb.served).toEqual([2, 1]);
  // Each of the first two turns cost the backend a premature submit and its retry.
  const nudges = backend.requests.filter((r) => r.method === "POST" && String((r.body.messages as Wire[]).at(-1)!.content).startsWith("[StepEnforcementError]"));
  expect(nudges).toHaveLength(2);
  const stats = await Promise.all([a, b].map(async (url) => (await (await fetch(`${url}/forge/stats`)).json()) as { requests: number; retries: number }));
  expect(stats.map((s) => s.requests)).toEqual([2, 1]);
  expect(stats[0]!.retries + stats[1]!.retries).toBe(2);
}, 120_000);

it.each([
  ['{"requiredSteps": ["search"]}', /--policy .*policy\.json: requiredSteps need a terminalTool/],
  ["{not json", /--policy: .*policy\.json is not JSON/],
])("a policy file with mistakes exits 2 before listening: %s", async (text, message) => {
  const policyPath = join(await mkdtemp(join(tmpdir(), "forge-policy-")), "policy.json");
  await writeFile(policyPath, text);
  const child = spawn(process.execPath, cliArgs("src/cli/main.ts", "proxy", "--backend", "ollama", "--model", "m", "--policy", policyPath, "--port", "0"), { env });
  children.push(child);
  let err = "";
  child.stderr.on("data", (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  expect(code).toBe(2);
  expect(err).toMatch(message);
}, 120_000);
