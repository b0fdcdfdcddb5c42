import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  MessageRole,
  MessageType,
  NUDGE_TYPES,
  DROPPED_RESULT,
  createMessage,
  isPlainObject,
  jsonIssue,
  walkJsonIssue,
  MAX_JSON_DEPTH,
  MessageSchema,
  messageText,
  serializeMessages,
  toApiMessage,
  type ApiFormat,
  type Message,
  type OllamaWireMessage,
  type OpenAIWireMessage,
  type ReasoningReplay,
  type ToolCallInfo,
} from "../../src/core/messages.js";
import { jsonValue } from "../support/arbitraries.js";

const call = (name: string, args: unknown, callId = `call_${name}`): ToolCallInfo => ({ name, args, callId });
const sys = createMessage("system", "You are helpful.", MessageType.SYSTEM_PROMPT);
const user = createMessage("user", "Weather in Paris?", MessageType.USER_INPUT);
const assistantCall = createMessage("assistant", "", MessageType.TOOL_CALL, {
  toolCalls: [call("get_weather", { city: "Paris" }, "c1")],
  stepIndex: 1,
});
const toolResult = createMessage("tool", "72F", MessageType.TOOL_RESULT, { toolName: "get_weather", toolCallId: "c1", stepIndex: 1 });
const reasoning = (text: string, stepIndex?: number) => createMessage("assistant", text, MessageType.REASONING, stepIndex === undefined ? {} : { stepIndex });

describe("MessageRole / MessageType", () => {
  it("have the seed's values, plus prerequisite_nudge", () => {
    expect(Object.values(MessageRole)).toEqual(["system", "user", "assistant", "tool"]);
    expect(MessageType.PREREQUISITE_NUDGE).toBe("prerequisite_nudge");
    expect(new Set(Object.values(MessageType))).toEqual(
      new Set([
        "system_prompt",
        "user_input",
        "tool_call",
        "tool_result",
        "reasoning",
        "text_response",
        "step_nudge",
        "prerequisite_nudge",
        "retry_nudge",
        "summary",
      ]),
    );
  });

  it("NUDGE_TYPES holds exactly the three nudges", () => {
    expect([...NUDGE_TYPES].sort()).toEqual(["prerequisite_nudge", "retry_nudge", "step_nudge"]);
    expect(NUDGE_TYPES.has(MessageType.USER_INPUT)).toBe(false);
  });
});

describe("createMessage", () => {
  it("builds meta from type and optional stepIndex", () => {
    expect(createMessage("user", "hi", MessageType.USER_INPUT)).toEqual({ role: "user", content: "hi", meta: { type: "user_input" } });
    expect(createMessage("user", "hi", MessageType.USER_INPUT)).not.toHaveProperty("meta.stepIndex");
    expect(createMessage("user", "go on", MessageType.RETRY_NUDGE, { stepIndex: 0 }).meta).toEqual({ type: "retry_nudge", stepIndex: 0 });
  });

  it("copies the tool fields and keeps stepIndex out of the top level", () => {
    expect(toolResult).toEqual({
      role: "tool",
      content: "72F",
      meta: { type: "tool_result", stepIndex: 1 },
      toolName: "get_weather",
      toolCallId: "c1",
    });
    expect(toolResult).not.toHaveProperty("stepIndex");
    expect(assistantCall.toolCalls).toEqual([{ name: "get_weather", args: { city: "Paris" }, callId: "c1" }]);
  });

  it("produces plain JSON data", () => {
    expect(JSON.parse(JSON.stringify(assistantCall))).toEqual(assistantCall);
  });
});

describe("isPlainObject", () => {
  it("accepts objects, rejects arrays, null and primitives", () => {
    expect(isPlainObject({})).toBe(true);
    expect(isPlainObject({ a: 1 })).toBe(true);
    expect(isPlainObject(Object.create(null))).toBe(true);
    for (const v of [[], [1], null, undefined, 0, "x", true]) expect(isPlainObject(v)).toBe(false);
  });
});

describe("toApiMessage: ollama", () => {
  it("sends args as an object and no type or id on calls", () => {
    const wire = toApiMessage(assistantCall, "ollama") as OllamaWireMessage;
    expect(wire).toEqual({ role: "assistant", content: "", tool_calls: [{ function: { name: "get_weather", arguments: { city: "Paris" } } }] });
    expect(wire.tool_calls?.[0]).not.toHaveProperty("type");
    expect(wire.tool_calls?.[0]).not.toHaveProperty("id");
  });

  it("puts tool_name on tool results and no OpenAI fields", () => {
    expect(toApiMessage(toolResult, "ollama")).toEqual({ role: "tool", content: "72F", tool_name: "get_weather" });
  });

  it("shows non-object args as { _invalid_arguments: raw }", () => {
    for (const raw of ['{"city": "Paris"', ["Paris"], 42, null, "Paris"]) {
      const m = createMessage("assistant", "", MessageType.TOOL_CALL, { toolCalls: [call("get_weather", raw)] });
      const wire = toApiMessage(m, "ollama") as OllamaWireMessage;
      expect(wire.tool_calls?.[0]?.function.arguments).toEqual({ _invalid_arguments: raw });
    }
  });

  it("keeps every call of a batch in order", () => {
    const m = createMessage("assistant", "", MessageType.TOOL_CALL, { toolCalls: [call("a", { x: 1 }), call("b", {})] });
    const wire = toApiMessage(m, "ollama") as OllamaWireMessage;
    expect(wire.tool_calls?.map((c) => c.function.name)).toEqual(["a", "b"]);
  });

  it("omits tool_calls when empty and tool_name on non-tool roles", () => {
    const m = createMessage("assistant", "hello", MessageType.TEXT_RESPONSE, { toolCalls: [], toolName: "x" });
    expect(toApiMessage(m, "ollama")).toEqual({ role: "assistant", content: "hello" });
  });
});

describe("toApiMessage: openai", () => {
  it("sends args as a JSON string with type function and the call id", () => {
    const wire = toApiMessage(assistantCall, "openai") as OpenAIWireMessage;
    expect(wire).toEqual({
      role: "assistant",
      content: "",
      tool_calls: [{ id: "c1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }],
    });
    expect(JSON.parse(wire.tool_calls?.[0]?.function.arguments ?? "")).toEqual({ city: "Paris" });
  });

  it("puts tool_call_id and name on tool results", () => {
    expect(toApiMessage(toolResult, "openai")).toEqual({ role: "tool", content: "72F", tool_call_id: "c1", name: "get_weather" });
  });

  it("always sends a JSON object string: non-object args are kept visibly under _invalid_arguments", () => {
    const raw = createMessage("assistant", "", MessageType.TOOL_CALL, { toolCalls: [call("t", '{"a":'), call("u", undefined), call("v", { ok: 1 })] });
    const wire = toApiMessage(raw, "openai") as OpenAIWireMessage;
    expect(wire.tool_calls?.map((c) => JSON.parse(c.function.arguments))).toEqual([{ _invalid_arguments: '{"a":' }, { _invalid_arguments: null }, { ok: 1 }]);
  });

  it("plain messages carry only role and content", () => {
    expect(toApiMessage(sys, "openai")).toEqual({ role: "system", content: "You are helpful." });
    expect(toApiMessage(user, "openai")).toEqual({ role: "user", content: "Weather in Paris?" });
  });
});

const formats: ApiFormat[] = ["ollama", "openai"];
// Summaries are folded into the system prompt (own test below), so the order properties leave them out.
const typeArb = fc.constantFrom(...Object.values(MessageType).filter((t) => t !== MessageType.SUMMARY));
const roleArb = fc.constantFrom(...Object.values(MessageRole));
const callArb = fc.record({ name: fc.string({ minLength: 1, maxLength: 10 }), args: jsonValue({ maxDepth: 3 }), callId: fc.string({ maxLength: 8 }) });
const messageArb: fc.Arbitrary<Message> = fc
  .record({
    role: roleArb,
    content: fc.string({ maxLength: 30 }),
    type: typeArb,
    stepIndex: fc.option(fc.nat(20), { nil: undefined }),
    toolName: fc.option(fc.string({ maxLength: 10 }), { nil: undefined }),
    toolCallId: fc.option(fc.string({ maxLength: 10 }), { nil: undefined }),
    toolCalls: fc.option(fc.array(callArb, { maxLength: 3 }), { nil: undefined }),
  })
  .map(({ role, content, type, stepIndex, ...extra }) => {
    const m = createMessage(role, content, type, { stepIndex, ...extra });
    m.meta.tokenEstimate = content.length;
    return m;
  });
const replayArb = fc.constantFrom<ReasoningReplay>("none", "keep-last", "full");

function hasKeyDeep(value: unknown, key: string): boolean {
  if (Array.isArray(value)) return value.some((v) => hasKeyDeep(v, key));
  if (isPlainObject(value)) return Object.hasOwn(value, key) || Object.values(value).some((v) => hasKeyDeep(v, key));
  return false;
}

describe("metadata never reaches the wire", () => {
  it("property: no serialized message has meta (or camelCase fields) and all are JSON round-trippable", () => {
    fc.assert(
      fc.property(fc.array(messageArb, { maxLength: 8 }), fc.constantFrom(...formats), replayArb, (messages, format, replay) => {
        const wire = serializeMessages(messages, format, { reasoningReplay: replay });
        for (const w of wire) {
          expect(Object.keys(w)).not.toContain("meta");
          for (const k of ["toolName", "toolCallId", "toolCalls", "stepIndex", "tokenEstimate"]) expect(w).not.toHaveProperty(k);
          expect(JSON.parse(JSON.stringify(w))).toEqual(w);
        }
        // Only generated args could legitimately contain a "meta" key; the envelope never does.
        const envelopes = wire.map((w) => ({ ...w, tool_calls: undefined }));
        expect(hasKeyDeep(envelopes, "meta")).toBe(false);
      }),
      { numRuns: 200 },
    );
  });

  it("property: toApiMessage keeps role and content, never mutates the message", () => {
    fc.assert(
      fc.property(messageArb, fc.constantFrom(...formats), (m, format) => {
        const before = structuredClone(m);
        const wire = toApiMessage(m, format);
        expect(wire.role).toBe(m.role);
        expect(wire.content).toBe(m.content);
        expect(m).toEqual(before);
        const n = m.toolCalls?.length ?? 0;
        expect(((wire.tool_calls as unknown[] | undefined) ?? []).length).toBe(n);
      }),
      { numRuns: 200 },
    );
  });
});

describe("serializeMessages: reasoning folding", () => {
  const history: Message[] = [
    sys,
    user,
    reasoning("first thought", 1),
    assistantCall,
    toolResult,
    reasoning("second thought", 2),
    createMessage("assistant", "", MessageType.TOOL_CALL, { toolCalls: [call("answer", { text: "72F" }, "c2")], stepIndex: 2 }),
  ];
  const contents = (replay?: ReasoningReplay) =>
    serializeMessages(history, "ollama", replay === undefined ? {} : { reasoningReplay: replay }).map((w) => w.content);

  it("never sends REASONING standalone", () => {
    for (const replay of ["none", "keep-last", "full"] as const) {
      // (the trailing unanswered call gets its openai stand-in result; it is not reasoning)
      const wire = serializeMessages(history, "openai", { reasoningReplay: replay }).filter((w) => w.content !== DROPPED_RESULT);
      expect(wire).toHaveLength(history.length - 2);
    }
  });

  it('"none" (the default) drops all reasoning', () => {
    expect(contents()).toEqual(["You are helpful.", "Weather in Paris?", "", "72F", ""]);
    expect(contents("none")).toEqual(contents());
  });

  it('"keep-last" folds only the latest reasoning into the assistant message after it', () => {
    expect(contents("keep-last")).toEqual(["You are helpful.", "Weather in Paris?", "", "72F", "second thought"]);
  });

  it('"full" folds every reasoning message into its following assistant message', () => {
    expect(contents("full")).toEqual(["You are helpful.", "Weather in Paris?", "first thought", "72F", "second thought"]);
  });

  it("joins consecutive reasoning and existing assistant content with blank lines", () => {
    const h = [user, reasoning("a"), reasoning("b"), createMessage("assistant", "final words", MessageType.TEXT_RESPONSE)];
    expect(serializeMessages(h, "openai", { reasoningReplay: "full" }).map((w) => w.content)).toEqual(["Weather in Paris?", "a\n\nb\n\nfinal words"]);
    expect(serializeMessages(h, "openai", { reasoningReplay: "keep-last" }).map((w) => w.content)).toEqual(["Weather in Paris?", "b\n\nfinal words"]);
  });

  it("does not fold into tool or user messages; waits for the next assistant message", () => {
    const h = [user, reasoning("r"), toolResult, createMessage("assistant", "done", MessageType.TEXT_RESPONSE)];
    expect(serializeMessages(h, "ollama", { reasoningReplay: "full" }).map((w) => w.content)).toEqual(["Weather in Paris?", "72F", "r\n\ndone"]);
  });

  it("drops trailing reasoning with no assistant message after it", () => {
    expect(serializeMessages([user, reasoning("dangling")], "ollama", { reasoningReplay: "full" })).toEqual([{ role: "user", content: "Weather in Paris?" }]);
  });

  it("keeps the tool calls of the message it folds into", () => {
    const wire = serializeMessages([user, reasoning("think"), assistantCall], "openai", { reasoningReplay: "full" });
    expect(wire[1]).toMatchObject({ role: "assistant", content: "think", tool_calls: [{ id: "c1", type: "function" }] });
  });

  it("property: output length = non-reasoning count; order and roles preserved", () => {
    fc.assert(
      fc.property(fc.array(messageArb, { maxLength: 10 }), fc.constantFrom(...formats), replayArb, (messages, format, replay) => {
        const kept = messages.filter((m) => m.meta.type !== MessageType.REASONING);
        // openai stand-ins for unanswered calls are covered by their own test
        const wire = serializeMessages(messages, format, { reasoningReplay: replay }).filter((w) => w.content !== DROPPED_RESULT);
        expect(wire.map((w) => w.role)).toEqual(kept.map((m) => m.role));
        kept.forEach((m, i) => {
          if (m.role !== "assistant" || replay === "none") expect(wire[i]?.content).toBe(m.content);
          else expect(String(wire[i]?.content).endsWith(m.content)).toBe(true);
        });
      }),
      { numRuns: 200 },
    );
  });

  it('property: "full" replays every non-empty reasoning text that has a later assistant message', () => {
    fc.assert(
      fc.property(fc.array(messageArb, { maxLength: 10 }), (messages) => {
        const text = serializeMessages(messages, "ollama", { reasoningReplay: "full" })
          .map((w) => w.content)
          .join("\n");
        messages.forEach((m, i) => {
          const later = messages.slice(i + 1).some((n) => n.role === "assistant" && n.meta.type !== MessageType.REASONING);
          if (m.meta.type === MessageType.REASONING && later) expect(text).toContain(m.content);
        });
      }),
      { numRuns: 200 },
    );
  });
});

describe("messageText", () => {
  it("is the content for plain messages", () => {
    expect(messageText(user)).toBe("Weather in Paris?");
  });

  it("renders calls as name(json), after any content", () => {
    expect(messageText(assistantCall)).toBe('get_weather({"city":"Paris"})');
    const m = createMessage("assistant", "Checking.", MessageType.TOOL_CALL, { toolCalls: [call("a", { x: 1 }), call("b", "raw")] });
    expect(messageText(m)).toBe('Checking.\na({"x":1})\nb(raw)');
  });
});

describe("serializeMessages: unanswered tool calls (openai)", () => {
  it("answers every call id whose result compaction dropped, right after its call message", () => {
    const calls = [call("a", { x: 1 }), call("b", {})].map((c, i) => ({ ...c, callId: `id${i}` }));
    const history = [
      createMessage("system", "s", MessageType.SYSTEM_PROMPT),
      createMessage("user", "u", MessageType.USER_INPUT),
      createMessage("assistant", "", MessageType.TOOL_CALL, { toolCalls: calls, stepIndex: 1 }),
      createMessage("tool", "kept", MessageType.TOOL_RESULT, { toolName: "b", toolCallId: "id1", stepIndex: 1 }),
      createMessage("assistant", "", MessageType.TOOL_CALL, { toolCalls: [{ name: "c", args: {}, callId: "id2" }], stepIndex: 2 }),
    ];
    const wire = serializeMessages(history, "openai") as OpenAIWireMessage[];
    expect(wire.map((w) => `${w.role}:${w.tool_call_id ?? ""}`)).toEqual([
      "system:", "user:", "assistant:", "tool:id1", "tool:id0", "assistant:", "tool:id2",
    ]);
    expect(wire[4]!.content).toBe(DROPPED_RESULT);
    // ollama needs no ids: nothing is added
    expect(serializeMessages(history, "ollama")).toHaveLength(history.length);
  });
});

describe("serializeMessages: compaction summaries", () => {
  it("fold into the leading system message instead of a mid-conversation system turn", () => {
    const history = [
      createMessage("system", "Be useful.", MessageType.SYSTEM_PROMPT),
      createMessage("user", "go", MessageType.USER_INPUT),
      createMessage("system", "[Steps completed: a, b]", MessageType.SUMMARY),
      createMessage("user", "more", MessageType.USER_INPUT),
    ];
    for (const format of ["openai", "ollama"] as const) {
      const wire = serializeMessages(history, format);
      expect(wire.map((w) => w.role)).toEqual(["system", "user", "user"]);
      expect(wire[0]!.content).toBe("Be useful.\n\n[Steps completed: a, b]");
    }
    expect(history[0]!.content).toBe("Be useful.");
  });
});

describe("jsonIssue and MessageSchema (hardening)", () => {
  it("property: the quick look never changes the answer of the careful walk", () => {
    const value = fc.anything({ withBigInt: true, withDate: true, withMap: true, withSet: true, withTypedArray: true, withSparseArray: true, withNullPrototype: true, withObjectString: true, maxDepth: 6 });
    fc.assert(
      fc.property(value, fc.integer({ min: 0, max: 8 }), (v, depth) => {
        expect(jsonIssue(v)).toBe(walkJsonIssue(v));
        expect(jsonIssue(v, depth)).toBe(walkJsonIssue(v, depth));
      }),
      { numRuns: 3000 },
    );
    let deep: unknown = 1;
    for (let i = 0; i < 100; i++) deep = { d: deep };
    expect(jsonIssue(deep)).toBe(walkJsonIssue(deep));
    expect(jsonIssue(deep, 80)).toBe(walkJsonIssue(deep, 80));
  });

  it("accepts plain JSON and names the first non-JSON value by path", () => {
    expect(jsonIssue({ a: [1, "x", null, true, { b: undefined }] })).toBeUndefined();
    expect(jsonIssue({ a: [1, 2n] })).toBe("a bigint at a[1]");
    expect(jsonIssue({ f: () => 1 })).toBe("a function at f");
    expect(jsonIssue({ n: Number.NaN })).toBe("NaN at n (not a JSON number)");
    expect(jsonIssue({ d: new Date(0) })).toBe("a Date at d");
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(jsonIssue(cycle)).toMatch(/nesting deeper than 512 levels \(or a cycle\)/);
    const deep = JSON.parse("[".repeat(MAX_JSON_DEPTH + 1) + "]".repeat(MAX_JSON_DEPTH + 1));
    expect(jsonIssue(deep)).toMatch(/nesting deeper/);
    expect(jsonIssue(JSON.parse("[".repeat(MAX_JSON_DEPTH) + "]".repeat(MAX_JSON_DEPTH)))).toBeUndefined();
    expect(jsonIssue(JSON.parse("[".repeat(100_000) + "]".repeat(100_000)))).toMatch(/nesting deeper/);
    const getter = Object.defineProperty({}, "x", { enumerable: true, get: () => { throw new Error("nope"); } });
    expect(jsonIssue(getter)).toMatch(/unreadable property/);
  });

  it("MessageSchema accepts createMessage output and refuses wrong types", () => {
    expect(MessageSchema.safeParse(createMessage("tool", "r", MessageType.TOOL_RESULT, { toolName: "t", toolCallId: "c", stepIndex: 1 })).success).toBe(true);
    for (const bad of [5, null, { role: "user", content: 5, meta: { type: "user_input" } }, { role: "user", content: "x", meta: { type: "nope" } }]) {
      expect(MessageSchema.safeParse(bad).success).toBe(false);
    }
  });
});
