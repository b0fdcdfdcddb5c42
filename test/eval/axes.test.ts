/**
 * The config axes of eval rows and `eval` flags (eval/axes.ts): how they name a config, what
 * they refuse before any run, and what reaches a backend — over loopback servers speaking the
 * OpenAI chat-completions and Ollama /api/chat wires, and on the simulated model.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { getAblation } from "../../eval/ablation.js";
import { assertAxes, parseSampling, runRequest, type AxesTarget } from "../../eval/axes.js";
import { clientFactory } from "../../eval/backends.js";
import { loadBatchConfig, runConfigFor, type BatchRow } from "../../eval/batch.js";
import { evalMain } from "../../eval/cli/run.js";
import { configName, runEval, runScenario, type RunConfig } from "../../eval/harness.js";
import { RunRecordSchema } from "../../eval/run-record.js";
import type { EvalScenario } from "../../eval/scenario.js";
import { selectScenarios } from "../../eval/scenarios/index.js";
import { InvalidArgumentError, UnsupportedModelError } from "../../src/core/index.js";
import { sendJson, useFakeServers, type RecordedRequest } from "../clients/support/fake-server.js";
import { ollamaChat, openaiCompletion } from "../clients/support/wire.js";

const serve = useFakeServers();
const one = (name: string) => selectScenarios({ names: [name] })[0]!;
const row = (r: Partial<BatchRow> & Pick<BatchRow, "backend" | "model">): BatchRow => ({ ablation: "bare", compactStrategy: "tiered", stream: false, ...r });
const named = (r: Partial<BatchRow> & Pick<BatchRow, "backend" | "model">) => configName(runConfigFor(row(r), 1));

describe("config names", () => {
  it.each<[Partial<BatchRow>, string]>([
    [{ toolChoice: "any" }, "sim:small-model@bare+any"],
    [{ reasoningReplay: "keep-last" }, "sim:small-model@bare+replay=keep-last"],
    [{ reasoningReplay: "full" }, "sim:small-model@bare+replay=full"],
    [{ reasoningEffort: "high" }, "sim:small-model@bare+effort=high"],
    [{ sampling: { top_k: 20, temperature: 0.6, stop: "END" } }, "sim:small-model@bare+sampling=stop=END,temperature=0.6,top_k=20"],
    [{ recommendedSampling: true }, "sim:small-model@bare+recsampling"],
    [{ budgetMode: "backend" }, "sim:small-model@bare+budget=backend"],
    [{ budgetMode: "manual", manualTokens: 16384 }, "sim:small-model@bare+budget=manual:16384"],
  ])("%j → %s", (axes, name) => {
    expect(named({ backend: "sim", model: "small-model", ...axes })).toBe(name);
  });

  it("defaults leave a name as it was, so old result files still resume", () => {
    const defaults: Partial<BatchRow> = { toolChoice: "auto", reasoningReplay: "none", sampling: {}, recommendedSampling: false, budgetMode: "scenario" };
    expect(named({ backend: "sim", model: "small-model", ...defaults })).toBe("sim:small-model@bare");
    expect(named({ backend: "ollama", model: "qwen3:8b", ablation: "reforged", stream: true, think: false, ...defaults })).toBe("ollama:qwen3:8b@reforged+stream+think=false");
    expect(named({ backend: "llamaserver", model: "m", mode: "native", compactStrategy: "sliding", baseUrl: "http://h/v1", ggufPath: "/m.gguf" })).toBe(
      "llamaserver:m:native@bare+sliding+url=http://h/v1+gguf=/m.gguf",
    );
  });

  it("puts the axes right after the ablation, in forge's order, before the older tags", () => {
    const all = { toolChoice: "any", reasoningReplay: "keep-last", reasoningEffort: "high", sampling: { top_k: 20 }, recommendedSampling: true, budgetMode: "manual", manualTokens: 8192 } as const;
    expect(named({ backend: "llamaserver", model: "m", mode: "native", stream: true, think: true, baseUrl: "http://h/v1", compactStrategy: "none", ...all })).toBe(
      "llamaserver:m:native@bare+any+replay=keep-last+effort=high+sampling=top_k=20+recsampling+budget=manual:8192+none+stream+think=true+url=http://h/v1",
    );
  });
});

describe("refusals before any run", () => {
  const t = (x: Partial<AxesTarget> & Pick<AxesTarget, "backend">): AxesTarget => ({ model: "qwen3:8b", ...x });
  it.each<[string, AxesTarget, RegExp]>([
    ["any on ollama", t({ backend: "ollama", toolChoice: "any" }), /toolChoice: "any" cannot be sent to backend ollama: Ollama's \/api\/chat has no tool_choice/],
    ["any on llamaserver without native mode", t({ backend: "llamaserver", toolChoice: "any" }), /"any" on backend llamaserver needs mode "native".*mode auto/],
    ["any on llamafile in prompt mode", t({ backend: "llamafile", mode: "prompt", toolChoice: "any" }), /needs mode "native"/],
    ["a misspelt tool choice", t({ backend: "sim", toolChoice: "anyy" as "any" }), /toolChoice: use auto, any, not "anyy"/],
    ["a misspelt replay", t({ backend: "sim", reasoningReplay: "last" as "full" }), /reasoningReplay: use none, keep-last, full, not "last"/],
    ["effort on the simulated model", t({ backend: "sim", reasoningEffort: "high" }), /backend sim has no reasoning-effort setting \(openai, llamaserver, ollama, anthropic do\)/],
    ["effort on llamafile", t({ backend: "llamafile", reasoningEffort: "high" }), /backend llamafile has no reasoning-effort setting/],
    ["an effort Ollama has no level for", t({ backend: "ollama", reasoningEffort: "xhigh" }), /backend ollama takes low, medium, high, not "xhigh"/],
    ["a misspelt effort", t({ backend: "openai", reasoningEffort: "hihg" }), /takes none, minimal, low, medium, high, xhigh, not "hihg"/],
    ["effort with think false on ollama", t({ backend: "ollama", think: false, reasoningEffort: "low" }), /think false/],
    ["sampling on the simulated model", t({ backend: "sim", sampling: { temperature: 0 } }), /simulated model has no sampling/],
    ["a sampling field Ollama drops", t({ backend: "ollama", sampling: { logit_bias: 1 } }), /logit_bias: backend ollama has no equivalent/],
    ["a sampling field Anthropic drops", t({ backend: "anthropic", sampling: { min_p: 0.1 } }), /min_p: backend anthropic has no equivalent/],
    ["tool_choice as sampling", t({ backend: "openai", sampling: { tool_choice: "required" } }), /tool_choice: use toolChoice/],
    ["reasoning_effort as sampling", t({ backend: "openai", sampling: { reasoning_effort: "high" } }), /use reasoningEffort/],
    ["recommended sampling on the simulated model", t({ backend: "sim", recommendedSampling: true }), /simulated model has no sampling/],
    ["a misspelt budget mode", t({ backend: "sim", budgetMode: "full" as "manual" }), /budgetMode: use scenario, backend, manual, not "full"/],
    ["manual without tokens", t({ backend: "sim", budgetMode: "manual" }), /needs a positive integer token count/],
    ["tokens without manual", t({ backend: "sim", manualTokens: 4096 }), /for budget mode "manual" \(the mode is "scenario"\)/],
    ["backend budget on ollama", t({ backend: "ollama", budgetMode: "backend" }), /"backend" on backend ollama: Ollama reports no context window/],
    ["backend budget on the simulated model", t({ backend: "sim", budgetMode: "backend" }), /the simulated model reports no context window/],
  ])("%s", (_name, target, message) => {
    expect(() => assertAxes(target)).toThrow(InvalidArgumentError);
    expect(() => assertAxes(target)).toThrow(message);
  });

  it("an unknown model with recommended sampling is the registry's own error", () => {
    expect(() => assertAxes({ backend: "openai", model: "mystery-7b", recommendedSampling: true })).toThrow(UnsupportedModelError);
    expect(() => assertAxes({ backend: "openai", model: "Qwen3-8B-Q4_K_M", recommendedSampling: true })).not.toThrow();
  });

  it("accepts what each backend can honour", () => {
    for (const ok of [
      { backend: "openai", toolChoice: "any", reasoningEffort: "minimal", sampling: { logit_bias: 0 } },
      { backend: "llamaserver", mode: "native", toolChoice: "any", reasoningEffort: "xhigh", budgetMode: "backend" },
      { backend: "anthropic", toolChoice: "any", reasoningEffort: "max", sampling: { top_k: 5 } },
      { backend: "ollama", reasoningEffort: "high", sampling: { top_k: 20, max_tokens: 64 } },
      { backend: "sim", toolChoice: "any", reasoningReplay: "full", budgetMode: "manual", manualTokens: 4096 },
    ] as AxesTarget[]) {
      expect(() => assertAxes({ ...ok, model: "m" })).not.toThrow();
    }
    // Sampling fields are OpenAI names: Ollama's own spelling of max_tokens is not one.
    expect(() => assertAxes({ backend: "ollama", model: "m", sampling: { num_predict: 64 } })).toThrow(/num_predict: backend ollama has no equivalent/);
  });

  it("the eval command names its flag and exits before any backend is asked", async () => {
    // A port nothing listens on: the refusal comes before the reachability check.
    const dead = ["--base-url", "http://127.0.0.1:9"];
    await expect(evalMain(["--backend", "ollama", "--model", "qwen3:8b", ...dead, "--tool-choice", "any"])).rejects.toThrow(/--tool-choice: "any" cannot be sent to backend ollama/);
    await expect(evalMain(["--backend", "sim", "--reasoning-effort", "high"])).rejects.toThrow(/--reasoning-effort: backend sim has no reasoning-effort/);
    await expect(evalMain(["--backend", "sim", "--budget-mode", "manual"])).rejects.toThrow(/--budget-tokens: budget mode "manual" needs/);
    await expect(evalMain(["--backend", "sim", "--reasoning-replay", "most"])).rejects.toThrow(/--reasoning-replay: use none, keep-last, full/);
    await expect(evalMain(["--backend", "openai", "--model", "m", ...dead, "--sampling", "temperature"])).rejects.toThrow(/--sampling: expected key=value/);
  });

  it("a batch config's row is checked where it is loaded, naming the row", () => {
    const dir = mkdtempSync(join(tmpdir(), "forge-axes-"));
    const write = (rows: unknown[]) => {
      const path = join(dir, `c${Math.random().toString(36).slice(2)}.json`);
      writeFileSync(path, JSON.stringify({ name: "c", rows }));
      return path;
    };
    expect(() => loadBatchConfig(write([{ backend: "sim", model: "small-model", toolChoice: "required" }]))).toThrow(/rows\.0\.toolChoice/);
    expect(() => loadBatchConfig(write([{ backend: "sim", model: "small-model" }, { backend: "ollama", model: "q", toolChoice: "any" }]))).toThrow(/rows\.1\.toolChoice: "any" cannot be sent to backend ollama/);
    const ok = loadBatchConfig(write([{ backend: "sim", model: "small-model", ablation: "bare" }, { backend: "sim", model: "small-model", ablation: "bare", toolChoice: "any" }]));
    expect(ok.rows.map((r) => configName(runConfigFor(r, 1)))).toEqual(["sim:small-model@bare", "sim:small-model@bare+any"]);
  });
});

describe("parseSampling", () => {
  it("types numbers and booleans, keeps other values as strings", () => {
    expect(parseSampling(["temperature=0.2", "top_k=20", "seed=-3", "logprobs=true", "stop=END", "x=1e-3"])).toEqual({ temperature: 0.2, top_k: 20, seed: -3, logprobs: true, stop: "END", x: 0.001 });
    expect(() => parseSampling(["top_k=1", "top_k=2"])).toThrow(/top_k is given twice/);
    expect(() => parseSampling(["=1"])).toThrow(/expected key=value/);
  });
});

describe("requests on the wire", () => {
  /** An OpenAI-compatible server whose model answers prose (a bare run ends at its first answer). */
  async function openaiServer() {
    return serve((req, res) => {
      if (req.path === "/props") return sendJson(res, 200, { default_generation_settings: { n_ctx: 12_288 } });
      sendJson(res, 200, openaiCompletion({ content: "I would rather chat." }));
    });
  }
  const chats = (requests: RecordedRequest[]) => requests.filter((r) => r.path === "/v1/chat/completions").map((r) => r.body as Record<string, unknown>);

  it("openai: tool_choice required, reasoning_effort and the sampling fields (recommended under the row's) arrive in the body", async () => {
    const server = await openaiServer();
    const config = runConfigFor(row({ backend: "openai", model: "Qwen3-8B", baseUrl: `${server.url}/v1`, toolChoice: "any", reasoningEffort: "high", sampling: { temperature: 0.3, seed: 7 }, recommendedSampling: true }), 1);
    const record = await runScenario(one("basic_2step"), config, 0);
    const [body] = chats(server.requests);
    expect(body).toMatchObject({ tool_choice: "required", reasoning_effort: "high", temperature: 0.3, seed: 7, top_p: 0.95, top_k: 20, min_p: 0 });
    expect(body!.tools).toHaveLength(2);
    expect(record).toMatchObject({ config: expect.stringContaining("@bare+any+effort=high+sampling=seed=7,temperature=0.3+recsampling"), toolChoice: "any", reasoningEffort: "high", budgetTokens: 8192 });
    expect(RunRecordSchema.parse(record)).toEqual(record);
  });

  it("llamaserver: the effort also reaches the chat template; budget mode backend takes /props' n_ctx, compaction scenarios keep theirs", async () => {
    const server = await openaiServer();
    const config = runConfigFor(row({ backend: "llamaserver", model: "m", mode: "native", baseUrl: `${server.url}/v1`, toolChoice: "any", reasoningEffort: "low", budgetMode: "backend" }), 1);
    const records = await runEval({ scenarios: [one("basic_2step"), one("compaction_stress")], runs: 1, config });
    const [body] = chats(server.requests);
    expect(body).toMatchObject({ tool_choice: "required", reasoning_effort: "low", chat_template_kwargs: { reasoning_effort: "low" } });
    expect(records.map((r) => [r.scenario, r.budgetTokens])).toEqual([["basic_2step", 12_288], ["compaction_stress", 2048]]);
  });

  it("no axis set: the body is what it was (no tool_choice, no effort, no sampling)", async () => {
    const server = await openaiServer();
    const record = await runScenario(one("basic_2step"), runConfigFor(row({ backend: "openai", model: "m", baseUrl: `${server.url}/v1` }), 1), 0);
    const [body] = chats(server.requests);
    expect(Object.keys(body!).sort()).toEqual(["messages", "model", "stream", "tools"]);
    expect(record.budgetTokens).toBe(8192);
    expect(record).not.toHaveProperty("toolChoice");
  });

  it("reasoning replay reaches the runner: full sends the earlier reasoning back, the default does not", async () => {
    const bodies = async (replay: RunConfig["reasoningReplay"]) => {
      const server = await serve((_req, res) => {
        const turn = server.requests.filter((r) => r.path === "/v1/chat/completions").length;
        if (turn === 1) return sendJson(res, 200, openaiCompletion({ reasoning: "Paris needs a lookup first", toolCalls: [{ name: "get_country_info", args: { country: "France" } }] }));
        sendJson(res, 200, openaiCompletion({ content: "done" }));
      });
      const config = runConfigFor(row({ backend: "openai", model: "m", baseUrl: `${server.url}/v1`, ...(replay ? { reasoningReplay: replay } : {}) }), 1);
      const record = await runScenario(one("basic_2step"), config, 0);
      return { second: JSON.stringify(chats(server.requests)[1]!.messages), record };
    };
    const full = await bodies("full");
    const none = await bodies(undefined);
    expect(full.second).toContain("Paris needs a lookup first");
    expect(none.second).not.toContain("Paris needs a lookup first");
    expect(full.record).toMatchObject({ reasoningReplay: "full" });
    expect(none.record).not.toHaveProperty("reasoningReplay");
  });

  it("ollama: num_ctx is each scenario's context on one shared client (its contextTokens when set), and the thinking level rides on think", async () => {
    const server = await serve((_req, res) => sendJson(res, 200, ollamaChat({ content: "no tools today" })));
    const wide: EvalScenario = { ...one("basic_2step"), name: "basic_2step_wide", contextTokens: 16_384 };
    const run = async (extra: Partial<BatchRow>) => {
      const before = server.requests.length;
      const config = runConfigFor(row({ backend: "ollama", model: "llama3.1:8b", baseUrl: server.url, reasoningEffort: "medium", ...extra }), 1);
      const records = await runEval({ scenarios: [one("basic_2step"), one("compaction_stress"), wide], runs: 1, config });
      const sent = server.requests.slice(before).filter((r) => r.path === "/api/chat").map((r) => r.body as { options?: { num_ctx?: number }; think?: unknown });
      return { records, sent };
    };
    const scenarioMode = await run({});
    expect(scenarioMode.sent.map((b) => b.options?.num_ctx)).toEqual([8192, 2048, 16_384]);
    expect(scenarioMode.sent.every((b) => b.think === "medium")).toBe(true);
    expect(scenarioMode.records.map((r) => r.budgetTokens)).toEqual([8192, 2048, 8192]);
    const manual = await run({ budgetMode: "manual", manualTokens: 32_768 });
    expect(manual.sent.map((b) => b.options?.num_ctx)).toEqual([32_768, 2048, 32_768]);
    expect(manual.records.map((r) => r.budgetTokens)).toEqual([32_768, 2048, 32_768]);
  });
});

describe("the simulated model under --tool-choice any", () => {
  it("bare+any differs from bare: no answer in prose, so no bare-text failures", async () => {
    const scenarios = selectScenarios({ tags: ["plumbing"] });
    const config = (toolChoice?: "any"): RunConfig => ({
      backend: "sim", model: "small-model", ablation: getAblation("bare"), compactStrategy: "tiered", stream: false, seed: 42,
      makeClient: clientFactory({ backend: "sim", model: "small-model" }), ...(toolChoice ? { toolChoice } : {}),
    });
    const bare = await runEval({ scenarios, runs: 4, config: config() });
    const any = await runEval({ scenarios, runs: 4, config: config("any") });
    const prose = (records: typeof bare) => records.filter((r) => r.injectedFaults?.some((f) => f === "bare_text" || f === "rescue_format")).length;
    expect(prose(bare)).toBeGreaterThan(0);
    expect(prose(any)).toBe(0);
    expect(any.every((r) => r.key.startsWith("sim:small-model@bare+any|") && r.toolChoice === "any")).toBe(true);
    expect(any.filter((r) => r.correct).length).toBeGreaterThan(bare.filter((r) => r.correct).length);
  });

  it("the request defaults are the runner's: none without axes, tool_choice only with any", () => {
    expect(runRequest({ backend: "sim", model: "small-model" }, 8192)).toBeUndefined();
    expect(runRequest({ backend: "sim", model: "small-model", toolChoice: "any" }, 8192)).toEqual({ toolChoice: "required" });
    expect(runRequest({ backend: "ollama", model: "m" }, 4096)).toEqual({ body: { options: { num_ctx: 4096 } } });
    expect(runRequest({ backend: "anthropic", model: "m", toolChoice: "any", reasoningEffort: "high" }, 8192)).toEqual({ toolChoice: "required", body: { reasoning_effort: "high" } });
  });
});
