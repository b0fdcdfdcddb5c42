/**
 * GET /metrics of a real proxy over loopback, in front of a scripted loopback backend that
 * misbehaves the way small models do: the scrape (read back with an independent parser) counts
 * exactly the requests sent, the rescues by format, the nudges by kind, the spent budgets and
 * the tokens the backend reported.
 */
import { describe, expect, it } from "vitest";
import type { ModelReply } from "../clients/support/wire.js";
import { createForgeMetrics } from "../../src/telemetry/metrics.js";
import { scrape } from "../support/prometheus.js";
import { hermes, proxyRig, WEATHER_SCHEMA } from "./support/harness.js";

const tools = [{ type: "function", function: { name: "get_weather", description: "Weather for a city", parameters: WEATHER_SCHEMA } }];
const anthropicTools = [{ name: "get_weather", description: "Weather for a city", input_schema: WEATHER_SCHEMA }];

async function post(url: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  const res = await fetch(`${url}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: typeof body === "string" ? body : JSON.stringify(body) });
  await res.arrayBuffer();
  return res;
}

const chat = (extra: Record<string, unknown> = {}) => ({ model: "qwen3:8b", messages: [{ role: "user", content: "Weather in Oslo?" }], tools, ...extra });
const oslo = { name: "get_weather", args: { city: "Oslo" } };

describe("GET /metrics on the proxy", () => {
  it("counts requests, rescues by format, nudges by kind, spent budgets and tokens", async () => {
    // One backend answer per line, in the order the requests below consume them.
    const script: ModelReply[] = [
      { content: hermes("get_weather", { city: "Oslo" }) }, // A: rescued (hermes)
      { toolCalls: [{ name: "get_wether", args: { city: "Oslo" } }] }, // B: unknown tool → nudge
      { toolCalls: [oslo] }, //                                               B: accepted
      { content: "Let me think about the weather." }, //                     C: no call where one is required → nudge
      { content: '```json\n{"tool": "get_weather", "args": {"city": "Oslo"}}\n```' }, // C: rescued (fenced_json)
      { content: "Sure! Here it is: not json" }, //                           D: not the JSON asked for → nudge
      { content: '{"city": "Oslo"}' }, //                                     D: accepted
      { content: "I would rather chat." }, //                                 E: nudge
      { content: "Still chatting." }, //                                      E: retries spent → exhausted
      { toolCalls: [oslo] }, //                                               F (Anthropic): accepted
    ];
    const rig = await proxyRig(script, { proxy: { maxRetries: 1 } });
    expect((await post(rig.url, "/v1/chat/completions", chat())).status).toBe(200); // A
    expect((await post(rig.url, "/v1/chat/completions", chat())).status).toBe(200); // B
    expect((await post(rig.url, "/v1/chat/completions", chat({ tool_choice: "required" }))).status).toBe(200); // C
    const d = { model: "qwen3:8b", messages: [{ role: "user", content: "Oslo as JSON" }], response_format: { type: "json_object" } };
    expect((await post(rig.url, "/v1/chat/completions", d)).status).toBe(200); // D
    const e = await post(rig.url, "/v1/chat/completions", chat({ tool_choice: "required" }));
    expect(e.headers.get("x-forge-exhausted")).toBe("retries"); // E
    const f = { model: "qwen3:8b", max_tokens: 64, messages: [{ role: "user", content: "Weather in Oslo?" }], tools: anthropicTools };
    expect((await post(rig.url, "/v1/messages", f)).status).toBe(200); // F
    expect((await post(rig.url, "/v1/chat/completions", "{not json")).status).toBe(400); // G: rejected

    const s = await scrape(`${rig.url}/metrics`);
    const at = { backend: "backend", model: "qwen3:8b" };
    expect(s.value("forge_proxy_requests_total", { api: "openai", outcome: "ok", ...at })).toBe(4);
    expect(s.value("forge_proxy_requests_total", { api: "openai", outcome: "exhausted", ...at })).toBe(1);
    expect(s.value("forge_proxy_requests_total", { api: "anthropic", outcome: "ok", ...at })).toBe(1);
    expect(s.value("forge_proxy_requests_total", { api: "openai", outcome: "rejected", backend: "none", model: "unknown" })).toBe(1);
    expect(s.value("forge_proxy_requests_total")).toBe(7);

    expect(s.labelValues("forge_rescues_total", "format")).toEqual(["fenced_json", "hermes"]);
    expect(s.value("forge_rescues_total", { surface: "proxy", format: "hermes", ...at })).toBe(1);
    expect(s.value("forge_rescues_total", { surface: "proxy", format: "fenced_json", ...at })).toBe(1);
    expect(s.value("forge_rescues_total")).toBe(2);
    expect(s.value("forge_nudges_total", { surface: "proxy", kind: "unknown_tool", ...at })).toBe(1);
    expect(s.value("forge_nudges_total", { surface: "proxy", kind: "retry", ...at })).toBe(2);
    expect(s.value("forge_nudges_total", { surface: "proxy", kind: "structured_output", ...at })).toBe(1);
    expect(s.value("forge_nudges_total")).toBe(4);
    expect(s.value("forge_budgets_exhausted_total", { surface: "proxy", kind: "retries" })).toBe(1);
    expect(s.value("forge_budgets_exhausted_total")).toBe(1);

    // The fake Ollama reports 11 prompt and 7 completion tokens per answer.
    const calls = rig.chats().length;
    expect(calls).toBe(script.length);
    expect(s.value("forge_tokens_total", { surface: "proxy", direction: "input", ...at })).toBe(11 * calls);
    expect(s.value("forge_tokens_total", { surface: "proxy", direction: "output", ...at })).toBe(7 * calls);
    // Every request that reached a backend has its added latency observed, once.
    expect(s.count("forge_proxy_added_latency_seconds", at)).toBe(6);
    // A proxy made without a metric set does not install Node's process collectors.
    expect(s.families.some((f) => f.name.startsWith("forge_process_"))).toBe(false);
  });

  it("counts streamed requests once their stream ends, live or judged", async () => {
    const rig = await proxyRig([{ content: "Hello there." }, { content: hermes("get_weather", { city: "Oslo" }) }]);
    expect((await post(rig.url, "/v1/chat/completions", { model: "qwen3:8b", stream: true, messages: [{ role: "user", content: "hi" }] })).status).toBe(200);
    expect((await post(rig.url, "/v1/chat/completions", chat({ stream: true }))).status).toBe(200);
    const s = await scrape(`${rig.url}/metrics`);
    expect(s.value("forge_proxy_requests_total", { api: "openai", outcome: "ok", backend: "backend", model: "qwen3:8b" })).toBe(2);
    expect(s.value("forge_rescues_total", { format: "hermes" })).toBe(1);
    expect(s.value("forge_tokens_total", { direction: "output" })).toBe(14);
  });

  it("sits behind --api-key like every route but /health", async () => {
    const rig = await proxyRig([{ toolCalls: [oslo] }], { proxy: { apiKey: "sekret" } });
    expect((await fetch(`${rig.url}/metrics`)).status).toBe(401);
    expect((await post(rig.url, "/v1/chat/completions", chat(), { authorization: "Bearer sekret" })).status).toBe(200);
    expect((await post(rig.url, "/v1/chat/completions", chat())).status).toBe(401);
    const s = await scrape(`${rig.url}/metrics`, { authorization: "Bearer sekret" });
    expect(s.value("forge_proxy_requests_total", { outcome: "ok" })).toBe(1);
    expect(s.value("forge_proxy_requests_total", { outcome: "rejected", backend: "none", model: "unknown" })).toBe(1);
  });

  it("bounds the model label: names past the limit are counted as other", async () => {
    const metrics = createForgeMetrics({ maxLabelValues: 2, processMetrics: false });
    const rig = await proxyRig(() => ({ content: "hello" }), { proxy: { metrics } });
    const models = ["m1", "m2", "m3", "m4", "m1"];
    for (const model of models) expect((await post(rig.url, "/v1/chat/completions", { model, messages: [{ role: "user", content: "hi" }] })).status).toBe(200);
    const s = await scrape(`${rig.url}/metrics`);
    expect(s.labelValues("forge_proxy_requests_total", "model")).toEqual(["m1", "m2", "other"]);
    expect(s.value("forge_proxy_requests_total", { model: "other" })).toBe(2);
    expect(s.value("forge_proxy_requests_total", { model: "m1" })).toBe(2);
    expect(s.labelValues("forge_tokens_total", "model")).toEqual(["m1", "m2", "other"]);
    expect(rig.proxy.metrics).toBe(metrics);
  });
});
