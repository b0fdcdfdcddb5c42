import { beforeEach, describe, expect, it } from "vitest";
import { UnsupportedModelError } from "../../src/core/errors.js";
import {
  findSamplingRule,
  getSamplingDefaults,
  normalizeModelId,
  resetSamplingInfoLog,
  resolveSampling,
  toWireSampling,
} from "../../src/models/sampling.js";
import { memoryLogger } from "../server/helpers.js";

beforeEach(() => resetSamplingInfoLog());

describe("sampling defaults lookup", () => {
  it("normalises the three identity forms", () => {
    expect(normalizeModelId("qwen3:14b-q4_K_M")).toBe("qwen3-14b-q4-k-m");
    expect(normalizeModelId("/models/Qwen3-8B-Q4_K_M.gguf")).toBe("qwen3-8b-q4-k-m");
    expect(normalizeModelId("Mistral-Nemo-Instruct-2407.Q4_K_M.llamafile")).toBe("mistral-nemo-instruct-2407.q4-k-m");
  });

  it.each([
    // [identity, family]
    ["qwen3:8b", "qwen3"],
    ["qwen3:14b-q4_K_M", "qwen3"],
    ["Qwen3-8B-Q4_K_M", "qwen3"],
    ["qwen3", "qwen3"],
    ["qwen3:30b-a3b-instruct-2507-q4_K_M", "qwen3-instruct-2507"],
    ["Qwen3-4B-Thinking-2507-Q8_0.gguf", "qwen3-thinking-2507"],
    ["qwen3-coder:30b", "qwen3-coder"],
    ["Qwen3-Coder-Next-Q4_K_M", "qwen3-coder-next"],
    ["qwen2.5:7b-instruct", "qwen2.5"],
    ["Qwen2.5-14B-Instruct-Q4_K_M", "qwen2.5"],
    ["ministral-3:8b-instruct-2512-q4_K_M", "ministral-3-instruct"],
    ["Ministral-3-14B-Instruct-2512-Q4_K_M", "ministral-3-instruct"],
    ["ministral-3:8b-reasoning-2512-q4_K_M", "ministral-3-8b-reasoning"],
    ["Ministral-3-14B-Reasoning-2512-Q4_K_M", "ministral-3-14b-reasoning"],
    ["mistral-nemo:12b-instruct-2407-q4_K_M", "mistral-nemo"],
    ["Mistral-Nemo-Instruct-2407.Q4_K_M", "mistral-nemo"],
    ["mistral-small3.2:24b", "mistral-small-3"],
    ["Mistral-Small-3.2-24B-Instruct-2506-Q4_K_M", "mistral-small-3"],
    ["mistral-small:24b-instruct-2501-q4_K_M", "mistral-small-3"],
    ["llama3.1:8b", "llama-3.1/3.2"],
    ["Meta-Llama-3.1-8B-Instruct-Q4_K_M", "llama-3.1/3.2"],
    ["Llama-3.2-3B-Instruct-Q4_K_M", "llama-3.1/3.2"],
    ["gemma3:12b", "gemma-3"],
    ["gemma-3-27b-it-Q4_K_M", "gemma-3"],
    ["glm-4.6", "glm-4.6"],
    ["gpt-oss:20b", "gpt-oss"],
    ["gpt-oss-120b-Q4_K_M", "gpt-oss"],
  ])("%s → %s", (model, family) => {
    expect(findSamplingRule(model)?.family).toBe(family);
  });

  it.each(["qwen3.5:27b", "qwen3-vl:8b", "mistral-small:22b", "llama3:8b", "llama3.3:70b", "gemma3n:e4b", "phi4-mini", "granite3.3:8b", "mistral:7b-instruct-v0.3", "unknown-model"])(
    "%s has no card values",
    (model) => {
      expect(getSamplingDefaults(model)).toBeUndefined();
    },
  );

  it("returns the card values as a fresh copy", () => {
    const a = getSamplingDefaults("qwen3:8b")!;
    expect(a).toEqual({ temperature: 0.6, topP: 0.95, topK: 20, minP: 0 });
    a.temperature = 2;
    expect(getSamplingDefaults("qwen3:8b")!.temperature).toBe(0.6);
    expect(getSamplingDefaults("mistral-nemo:12b")).toEqual({ temperature: 0.3 });
  });
});

describe("resolveSampling", () => {
  it("on + known: card values, explicit fields win one by one (undefined does not)", () => {
    expect(resolveSampling("qwen3:8b", { recommendedSampling: true, explicit: { temperature: 0.2, topK: undefined } })).toEqual({
      temperature: 0.2, topP: 0.95, topK: 20, minP: 0,
    });
  });

  it("on + unknown: UnsupportedModelError naming the model", () => {
    expect(() => resolveSampling("phi4-mini", { recommendedSampling: true })).toThrow(UnsupportedModelError);
    expect(() => resolveSampling("phi4-mini", { recommendedSampling: true })).toThrow(/phi4-mini/);
  });

  it("off: explicit only, one INFO per known model, silent for unknown ones", () => {
    const logger = memoryLogger();
    expect(resolveSampling("qwen3:8b", { recommendedSampling: false, explicit: { topP: 0.9 }, logger })).toEqual({ topP: 0.9 });
    resolveSampling("qwen3:8b", { recommendedSampling: false, logger });
    resolveSampling("mystery", { recommendedSampling: false, logger });
    expect(logger.lines).toHaveLength(1);
    // Both ways to opt in: the library option and the forge-ts commands' flag.
    expect(logger.lines[0]).toMatch(/^INFO Recommended sampling values exist for "qwen3:8b".*; to use them, pass recommendedSampling: true \(forge-ts commands: --recommended-sampling\)$/);
  });

  it("toWireSampling maps to snake_case extras", () => {
    expect(toWireSampling({ temperature: 0.7, topP: 0.8, topK: 20, minP: 0, repeatPenalty: 1.05, presencePenalty: 1.5 })).toEqual({
      temperature: 0.7,
      extra: { top_p: 0.8, top_k: 20, min_p: 0, repeat_penalty: 1.05, presence_penalty: 1.5 },
    });
    expect(toWireSampling({})).toEqual({ extra: {} });
  });
});
