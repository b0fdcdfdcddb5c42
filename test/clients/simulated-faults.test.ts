import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../src/core/errors.js";
import type { LLMResponse } from "../../src/core/llm.js";
import type { WireMessage } from "../../src/core/wire-messages.js";
import { isPlainObject } from "../../src/core/json-value.js";
import { prerequisiteName } from "../../src/core/tool.js";
import { FAULT_KINDS, FAULT_PROFILES, MISTAKE_KINDS, resolveFaultProfile, type FaultKind } from "../../src/clients/fault-profiles.js";
import { SimulatedClient } from "../../src/clients/simulated.js";
import { readConversation } from "../../src/clients/simulated-view.js";
import { supplierQuoteWorkflow } from "../../src/cli/demo-workflow.js";
import { RESCUE_FORMATS, rescueToolCall } from "../../src/parsing/index.js";
import { oracleConversation } from "./simulated-loop.js";

const demo = supplierQuoteWorkflow();
const specs = demo.workflow.getToolSpecs();
const toolNames = demo.workflow.toolNames;
// Conversation points: 0 = before lookup_part, 1 = before the pricing+inventory batch, 2 = before history, 3 = before submit.
const wires: WireMessage[][] = [];
for (let k = 0; k <= 3; k++) wires.push(await oracleConversation(demo, k));

const onlyFault = (kind: FaultKind, extra: Partial<Record<FaultKind, number>> = {}) => ({ name: `only-${kind}`, rates: { [kind]: 1, ...extra } });

async function faulty(kind: FaultKind, at: number, seed = 1, formats?: (typeof RESCUE_FORMATS)[number][]) {
  const profile = formats ? { ...onlyFault(kind), formats } : onlyFault(kind);
  const client = new SimulatedClient({ oracle: demo.oracle, workflow: demo.workflow, profile, seed });
  const response = await client.send(wires[at]!, specs);
  return { client, response, correct: demo.oracle(readConversation(wires[at]!, specs).view) };
}

function callsOf(r: LLMResponse) {
  if (r.type !== "tool_calls") throw new Error(`expected tool calls, got text: ${r.content}`);
  return r.toolCalls;
}

describe("each fault kind is produced and well-formed", () => {
  it("bare_text: prose that names no tool and rescues to nothing", async () => {
    for (let seed = 0; seed < 20; seed++) {
      const { response, client } = await faulty("bare_text", 0, seed);
      expect(response.type).toBe("text");
      expect(rescueToolCall((response as { content: string }).content, toolNames)).toEqual([]);
      expect(client.injected).toEqual(["bare_text"]);
    }
  });

  it.each(RESCUE_FORMATS.map((f) => [f]))("rescue_format %s: the text parses back to the correct call(s)", async (format) => {
    for (const at of [0, 1, 3]) {
      const { response, correct } = await faulty("rescue_format", at, 3, [format]);
      const want = "calls" in correct ? correct.calls : "tool" in correct ? [correct] : [];
      if (want.length > 1 && format === "llama_python_tag") {
        expect(response.type).toBe("tool_calls"); // single-call format cannot carry a batch: no fault this turn
        continue;
      }
      expect(response.type).toBe("text");
      const rescued = rescueToolCall((response as { content: string }).content, toolNames);
      expect(rescued.map((c) => ({ tool: c.tool, args: c.args }))).toEqual(want);
    }
  });

  it("unknown_tool: a near-miss name that is not offered, same args", async () => {
    const names = new Set<string>();
    for (let seed = 0; seed < 30; seed++) {
      const { response, correct } = await faulty("unknown_tool", 0, seed);
      const [call] = callsOf(response);
      expect(toolNames).not.toContain(call!.tool);
      expect(call!.args).toEqual((correct as { args: unknown }).args);
      names.add(call!.tool);
    }
    expect(names.size).toBeGreaterThan(1);
    expect([...names]).toContain("lookupPart");
  });

  it("premature_terminal: calls submit_quote with schema-valid args while steps are pending", async () => {
    for (const at of [0, 1, 2]) {
      const [call] = callsOf((await faulty("premature_terminal", at)).response);
      expect(call!.tool).toBe("submit_quote");
      expect(demo.workflow.tools.submit_quote!.validateArgs(call!.args).ok).toBe(true);
    }
  });

  it("premature_terminal is never injected when the correct step is already terminal, nor without a workflow", async () => {
    const { response, client, correct } = await faulty("premature_terminal", 3);
    expect(callsOf(response).map((c) => ({ tool: c.tool, args: c.args }))).toEqual([correct]);
    expect(client.injected).toEqual([]);
    const noWorkflow = new SimulatedClient({ oracle: demo.oracle, profile: onlyFault("premature_terminal") });
    await noWorkflow.send(wires[0]!, specs);
    expect(noWorkflow.injected).toEqual([]);
  });

  it("prerequisite_violation: calls a tool whose prerequisite has not run", async () => {
    const { response } = await faulty("prerequisite_violation", 0);
    const [call] = callsOf(response);
    const tool = demo.workflow.tools[call!.tool]!;
    expect(tool.prerequisites.map(prerequisiteName)).toContain("lookup_part");
    expect(tool.validateArgs(call!.args).ok).toBe(true);
    // After lookup_part ran for this part, the arg-matched prerequisite is met: nothing to violate.
    expect((await faulty("prerequisite_violation", 2)).client.injected).toEqual([]);
  });

  it("non_object_args: args are a string or an array", async () => {
    const kinds = new Set<string>();
    for (let seed = 0; seed < 20; seed++) {
      const [call] = callsOf((await faulty("non_object_args", 0, seed)).response);
      expect(isPlainObject(call!.args)).toBe(false);
      kinds.add(Array.isArray(call!.args) ? "array" : typeof call!.args);
    }
    expect(kinds).toEqual(new Set(["array", "string"]));
  });

  it("invalid_args: the call fails the tool's validateArgs", async () => {
    for (let seed = 0; seed < 30; seed++) {
      for (const at of [0, 1, 2, 3]) {
        const calls = callsOf((await faulty("invalid_args", at, seed)).response);
        const failing = calls.filter((c) => !demo.workflow.tools[c.tool]!.validateArgs(c.args).ok);
        expect(failing).toHaveLength(1);
      }
    }
  });

  it("repeat_call: repeats the previous successful call exactly", async () => {
    const wire = wires[2]!;
    const last = readConversation(wire, specs).view.results.at(-1)!;
    const [call] = callsOf((await faulty("repeat_call", 2)).response);
    expect({ tool: call!.tool, args: call!.args }).toEqual({ tool: last.tool, args: last.args });
    expect((await faulty("repeat_call", 0)).client.injected).toEqual([]); // nothing to repeat yet
  });

  it("reasoning: a reasoning field on calls, an inline <think> block on rescue text", async () => {
    const plain = await faulty("reasoning", 0);
    expect(plain.response.reasoning).toMatch(/lookup part/);
    expect(plain.client.injected).toEqual(["reasoning"]);
    const client = new SimulatedClient({ oracle: demo.oracle, workflow: demo.workflow, profile: { name: "r", rates: { rescue_format: 1, reasoning: 1 }, formats: ["hermes"] } });
    const response = await client.send(wires[0]!, specs);
    expect(response).toMatchObject({ type: "text", content: expect.stringMatching(/^<think>[\s\S]+<\/think>\n/) });
    expect(rescueToolCall((response as { content: string }).content, toolNames)).toMatchObject([{ tool: "lookup_part" }]);
    expect(client.injected).toEqual(["rescue_format", "reasoning"]);
  });
});

describe("fault rates", () => {
  const mistakes = MISTAKE_KINDS.filter((k) => k !== "repeat_call"); // all applicable on the first turn
  const count = async (profile: Parameters<typeof resolveFaultProfile>[0], wire: WireMessage[], n: number) => {
    const tally = new Map<FaultKind | "none", number>();
    for (let seed = 1; seed <= n; seed++) {
      const client = new SimulatedClient({ oracle: demo.oracle, workflow: demo.workflow, profile, seed });
      await client.send(wire, specs);
      const faults = client.injected.filter((k) => k !== "reasoning");
      const key = faults[0] ?? "none";
      tally.set(key, (tally.get(key) ?? 0) + 1);
      if (client.injected.includes("reasoning")) tally.set("reasoning", (tally.get("reasoning") ?? 0) + 1);
    }
    return tally;
  };
  // 5 sigma of a binomial proportion: fails by chance with p < 1e-6 per check, and the seeds are fixed.
  const within = (observed: number, p: number, n: number) => expect(Math.abs(observed / n - p)).toBeLessThanOrEqual(5 * Math.sqrt((p * (1 - p)) / n) + 1e-9);

  it("per-kind frequencies match a custom profile over many turns", async () => {
    const rates = Object.fromEntries(mistakes.map((k) => [k, 0.08])) as Record<FaultKind, number>;
    const n = 3000;
    const tally = await count({ name: "even", rates: { ...rates, reasoning: 0.3 } }, wires[0]!, n);
    for (const k of mistakes) within(tally.get(k) ?? 0, 0.08, n);
    within(tally.get("reasoning") ?? 0, 0.3, n);
    within(tally.get("none") ?? 0, 1 - 0.08 * mistakes.length, n);
  });

  it("small-model makes a mistake on ~25-35% of turns, chaotic on ~60-70%", async () => {
    const n = 1500;
    const small = await count("small-model", wires[0]!, n);
    const chaotic = await count("chaotic", wires[2]!, n);
    const smallRate = 1 - (small.get("none") ?? 0) / n;
    const chaoticRate = 1 - (chaotic.get("none") ?? 0) / n;
    expect(smallRate).toBeGreaterThan(0.25);
    expect(smallRate).toBeLessThan(0.35);
    expect(chaoticRate).toBeGreaterThan(0.55);
    expect(chaoticRate).toBeLessThan(0.72);
  });

  it("a turn right after a correction is damped (CORRECTION_DAMPING = 0.4)", async () => {
    const corrected: WireMessage[] = [...wires[0]!, { role: "assistant", content: "I'll check." }, { role: "user", content: "Your last reply was plain text." }];
    const n = 2000;
    const tally = await count(onlyFault("bare_text"), corrected, n);
    within(tally.get("bare_text") ?? 0, 0.4, n);
  });
});

describe("fault profiles", () => {
  it("built-in profiles are valid and documented totals hold", () => {
    const total = (name: keyof typeof FAULT_PROFILES) =>
      Object.entries(FAULT_PROFILES[name].rates).reduce((s, [k, v]) => (k === "reasoning" ? s : s + v), 0);
    expect(total("clean")).toBe(0);
    expect(total("small-model")).toBeCloseTo(0.3, 5);
    expect(total("chaotic")).toBeCloseTo(0.65, 5);
    for (const name of Object.keys(FAULT_PROFILES) as (keyof typeof FAULT_PROFILES)[]) expect(resolveFaultProfile(name)).toBe(FAULT_PROFILES[name]);
    expect(FAULT_KINDS).toHaveLength(9);
  });

  it("rejects typos, out-of-range rates, sums over 1 and unknown formats", () => {
    expect(() => resolveFaultProfile({ name: "x", rates: { bare_txt: 0.1 } as never })).toThrow(/bare_txt is not a fault kind/);
    expect(() => resolveFaultProfile({ name: "x", rates: { bare_text: 1.5 } })).toThrow(InvalidArgumentError);
    expect(() => resolveFaultProfile({ name: "x", rates: { bare_text: 0.6, invalid_args: 0.6 } })).toThrow(/sum to 1.200/);
    expect(() => resolveFaultProfile({ name: "x", rates: {}, formats: ["yaml" as never] })).toThrow(/"yaml" is not a rescue format/);
    expect(resolveFaultProfile({ name: "x", rates: { bare_text: 0.5, reasoning: 1 } }).name).toBe("x");
  });
});
