import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { WorkflowDefinitionError } from "../../src/core/errors.js";
import { defineTool, type AnyToolDef, type Prerequisite } from "../../src/core/tool.js";
import { Workflow, type WorkflowOptions } from "../../src/core/workflow.js";

const tool = (name: string, prerequisites: Prerequisite[] = []): AnyToolDef =>
  defineTool({ name, description: `${name} tool`, parameters: z.object({ q: z.string().optional() }), execute: () => name, prerequisites });

const search = tool("search");
const fetchTool = tool("fetch", ["search"]);
const answer = tool("answer", [{ tool: "fetch", args: { q: "$q" } }]);
const valid: WorkflowOptions = {
  name: "research",
  description: "Find and answer",
  tools: { search, fetch: fetchTool, answer },
  requiredSteps: ["search", "fetch"],
  terminalTool: "answer",
  systemPromptTemplate: "You research {topic} for {user}.",
};

/** Construct, expect a WorkflowDefinitionError naming the workflow, return its message. */
function definitionMessage(options: unknown): string {
  try {
    new Workflow(options as WorkflowOptions);
  } catch (e) {
    expect(e).toBeInstanceOf(WorkflowDefinitionError);
    return (e as Error).message;
  }
  throw new Error("expected a WorkflowDefinitionError, nothing was thrown");
}

describe("Workflow construction", () => {
  it("accepts a valid definition and normalizes fields", () => {
    const wf = new Workflow(valid);
    expect(wf.name).toBe("research");
    expect(wf.description).toBe("Find and answer");
    expect(wf.requiredSteps).toEqual(["search", "fetch"]);
    expect(wf.terminalTools).toEqual(["answer"]);
    expect(wf.systemPromptTemplate).toBe("You research {topic} for {user}.");
    expect(wf.toolNames).toEqual(["search", "fetch", "answer"]);
  });

  it("defaults description, requiredSteps and the template", () => {
    const wf = new Workflow({ name: "min", tools: { answer: tool("answer") }, terminalTool: "answer" });
    expect(wf.description).toBe("");
    expect(wf.requiredSteps).toEqual([]);
    expect(wf.systemPromptTemplate).toBe("");
    expect(wf.buildSystemPrompt()).toBe("");
  });

  it("accepts a terminalTool list and removes duplicates", () => {
    const wf = new Workflow({ ...valid, terminalTool: ["answer", "search", "answer"], requiredSteps: [] });
    expect(wf.terminalTools).toEqual(["answer", "search"]);
    expect(wf.isTerminal("search")).toBe(true);
  });

  it.each<[string, Partial<WorkflowOptions>, string[]]>([
    ["key/name mismatch", { tools: { search, lookup: fetchTool, answer } }, ['tool key "lookup"', '"fetch"']],
    ["unknown required step", { requiredSteps: ["search", "summarize"] }, ['required step "summarize"', "search, fetch, answer"]],
    ["duplicate required step", { requiredSteps: ["search", "search"] }, ["twice"]],
    ["non-array requiredSteps", { requiredSteps: "search" as never }, ["requiredSteps must be an array"]],
    ["unknown terminal", { terminalTool: "finish" }, ['terminal tool "finish"', "not one of the tools"]],
    ["unknown terminal in a list", { terminalTool: ["answer", "finish"] }, ['terminal tool "finish"']],
    ["terminal also required", { requiredSteps: ["search", "answer"] }, ['terminal tool "answer" cannot also be a required step']],
    ["empty terminal list", { terminalTool: [] }, ["non-empty list"]],
    ["non-string terminal", { terminalTool: 7 as never }, ["terminalTool must be"]],
    ["unknown prerequisite", { tools: { search, fetch: fetchTool, answer: tool("answer", ["verify"]) } }, ['prerequisite "verify" of tool "answer"']],
    [
      "unknown arg-matched prerequisite",
      { tools: { search, fetch: fetchTool, answer: tool("answer", [{ tool: "verify", args: { q: "$q" } }]) } },
      ['prerequisite "verify"'],
    ],
    ["self prerequisite", { tools: { search, fetch: fetchTool, answer: tool("answer", ["answer"]) } }, ['tool "answer" cannot be its own prerequisite']],
    ["empty tools", { tools: {} }, ["tools must be a non-empty object"]],
    ["tools not an object", { tools: [search] as never }, ["tools must be a non-empty object"]],
    ["a tool that is not a tool", { tools: { search, answer: "answer" as never } }, ["tools.answer is not a tool"]],
    ["non-string template", { systemPromptTemplate: 42 as never }, ["systemPromptTemplate must be a string"]],
  ])("%s", (_label, override, mentions) => {
    const message = definitionMessage({ ...valid, ...override });
    expect(message.startsWith('Workflow "research": ')).toBe(true);
    for (const m of mentions) expect(message).toContain(m);
  });

  it("rejects a missing name or options object", () => {
    expect(definitionMessage({ ...valid, name: "" })).toContain("name must be a non-empty string");
    expect(definitionMessage({ ...valid, name: 3 })).toContain("name must be a non-empty string");
    expect(definitionMessage(null)).toContain("options must be an object");
  });

  it("carries the workflow name as structured data", () => {
    try {
      new Workflow({ ...valid, terminalTool: "nope" });
      expect.unreachable();
    } catch (e) {
      expect((e as WorkflowDefinitionError).workflow).toBe("research");
      expect((e as WorkflowDefinitionError).data).toEqual({ workflow: "research" });
    }
  });
});

describe("Workflow collections", () => {
  const wf = new Workflow(valid);

  it("are frozen copies", () => {
    expect(Object.isFrozen(wf.tools)).toBe(true);
    expect(Object.isFrozen(wf.requiredSteps)).toBe(true);
    expect(Object.isFrozen(wf.terminalTools)).toBe(true);
    const tools: Record<string, AnyToolDef> = { answer: tool("answer") };
    const steps: string[] = [];
    const own = new Workflow({ name: "copy", tools, requiredSteps: steps, terminalTool: "answer" });
    tools.extra = tool("extra");
    steps.push("answer");
    expect(own.toolNames).toEqual(["answer"]);
    expect(own.requiredSteps).toEqual([]);
  });

  it("getToolSpecs returns each tool's spec in definition order", () => {
    expect(wf.getToolSpecs()).toEqual([search.spec, fetchTool.spec, answer.spec]);
    expect(wf.getToolSpecs().map((s) => s.name)).toEqual(["search", "fetch", "answer"]);
  });

  it("getTool returns the definition and throws naming an unknown tool", () => {
    expect(wf.getTool("fetch")).toBe(fetchTool);
    expect(() => wf.getTool("delete_all")).toThrow(WorkflowDefinitionError);
    expect(() => wf.getTool("delete_all")).toThrow('Workflow "research": no tool named "delete_all"');
  });

  it("isTerminal only for terminal tools", () => {
    expect(wf.isTerminal("answer")).toBe(true);
    expect(wf.isTerminal("search")).toBe(false);
    expect(wf.isTerminal("unknown")).toBe(false);
  });
});

describe("buildSystemPrompt", () => {
  const wf = new Workflow(valid);

  it("fills every {placeholder}", () => {
    expect(wf.buildSystemPrompt({ topic: "tides", user: "Ana" })).toBe("You research tides for Ana.");
  });

  it("ignores extra vars and leaves non-identifier braces alone", () => {
    const json = new Workflow({ ...valid, systemPromptTemplate: 'Reply as {"answer": "..."} about {topic}; {not valid} {1x}' });
    expect(json.buildSystemPrompt({ topic: "x", unused: "y" })).toBe('Reply as {"answer": "..."} about x; {not valid} {1x}');
  });

  it("fills a repeated placeholder everywhere", () => {
    const w = new Workflow({ ...valid, systemPromptTemplate: "{a}-{a}-{b}" });
    expect(w.buildSystemPrompt({ a: "1", b: "2" })).toBe("1-1-2");
  });

  it("throws naming every missing placeholder", () => {
    expect(() => wf.buildSystemPrompt({ topic: "tides" })).toThrow(WorkflowDefinitionError);
    expect(() => wf.buildSystemPrompt({ topic: "tides" })).toThrow('Workflow "research": system prompt placeholders without a value: user');
    expect(() => wf.buildSystemPrompt()).toThrow("topic, user");
  });

  it("does not take values from the prototype", () => {
    const w = new Workflow({ ...valid, systemPromptTemplate: "{toString}" });
    expect(() => w.buildSystemPrompt({})).toThrow("toString");
  });

  it("property: values are inserted verbatim (no $-patterns, no recursive fill)", () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (topic, user) => {
        expect(wf.buildSystemPrompt({ topic, user })).toBe(`You research ${topic} for ${user}.`);
      }),
      { numRuns: 200 },
    );
    expect(wf.buildSystemPrompt({ topic: "$& {user}", user: "$1" })).toBe("You research $& {user} for $1.");
  });
});

describe("definitions that could never run (hardening)", () => {
  it("a prerequisite cycle fails at new Workflow, naming the cycle", () => {
    const a = tool("a", ["c"]);
    const b = tool("b", ["a"]);
    const c = tool("c", [{ tool: "b" }]);
    const message = definitionMessage({ name: "cyc", tools: { a, b, c, done: tool("done") }, terminalTool: "done" });
    expect(message).toMatch(/cycle/);
    expect(message).toMatch(/a → c → b → a|b → a → c → b|c → b → a → c/);
  });

  it("a required step whose prerequisite (directly or transitively) is the terminal tool fails", () => {
    const direct = definitionMessage({ name: "t", tools: { s: tool("s", ["end"]), end: tool("end") }, requiredSteps: ["s"], terminalTool: "end" });
    expect(direct).toMatch(/required step "s" needs terminal tool "end" first \(s → end\)/);
    const via = definitionMessage({
      name: "t",
      tools: { s: tool("s", ["m"]), m: tool("m", ["end"]), end: tool("end") },
      requiredSteps: ["s"],
      terminalTool: ["end"],
    });
    expect(via).toMatch(/s → m → end/);
    // a non-required tool may depend on a terminal tool (it just never runs)
    expect(() => new Workflow({ name: "ok", tools: { s: tool("s", ["end"]), end: tool("end") }, terminalTool: "end" })).not.toThrow();
  });

  it("a fake tool object is refused with what it lacks", () => {
    expect(definitionMessage({ name: "f", tools: { x: { name: "x" }, end: tool("end") }, terminalTool: "end" })).toMatch(
      /tools\.x is not a tool \(no execute function/,
    );
    const noPrereqs = { ...tool("x"), prerequisites: undefined };
    expect(definitionMessage({ name: "f", tools: { x: noPrereqs, end: tool("end") }, terminalTool: "end" })).toMatch(/no prerequisites array/);
    expect(definitionMessage({ name: "f", tools: { x: 5, end: tool("end") }, terminalTool: "end" })).toMatch(/not an object/);
  });

  it("property: acyclic prerequisite chains are accepted, closing any chain into a loop is refused", () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 8 }), fc.nat(), (n, pick) => {
        const names = Array.from({ length: n }, (_, i) => `t${i}`);
        const chain = names.map((name, i) => tool(name, i > 0 ? [names[i - 1]!] : []));
        const tools = Object.fromEntries([...chain, tool("end")].map((t) => [t.name, t]));
        expect(() => new Workflow({ name: "chain", tools, terminalTool: "end" })).not.toThrow();
        const from = pick % n;
        const looped = { ...tools, t0: tool("t0", [names[Math.max(from, 1)]!]) };
        expect(definitionMessage({ name: "chain", tools: looped, terminalTool: "end" })).toMatch(/cycle/);
      }),
    );
  });
});
