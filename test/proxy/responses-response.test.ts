/**
 * ProxyOutcome → the Responses `response` object and its event stream: item shapes, namespaced
 * names restored, failure events, and (property) that any run of live deltas followed by any
 * answer gives a well-formed stream — numbered from 0 without gaps, every item added then done
 * once, deltas adding up to each item's final text, response.completed holding exactly the done items.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { HttpError } from "../../src/proxy-request/http-error.js";
import type { ProxyAnswer } from "../../src/proxy-request/proxy-request.js";
import type { ResponsesShape } from "../../src/proxy/responses-request.js";
import { ResponsesStreamEncoder, responsesResponse } from "../../src/proxy/responses-response.js";
import { NOTHING_SENT, type AnswerOutcome, type ResponseMeta, type SseFrame } from "../../src/proxy/sse-frames.js";

const meta: ResponseMeta = { id: "resp_abc", created: 1_800_000_000, model: "qwen3:8b", guarded: true, includeUsage: true };
const shape: ResponsesShape = { names: { crm__lookup: { name: "lookup", namespace: "crm" } }, dropped: [], echo: { store: false, tools: [] } };
const outcome = (answer: ProxyAnswer): AnswerOutcome => ({ kind: "answer", answer, usage: { inputTokens: 7, outputTokens: 3 }, attempts: 1, rescued: false });

type Event = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const events = (frames: SseFrame[]): Event[] =>
  frames.map((f) => {
    if ("comment" in f) throw new Error("unexpected comment frame");
    const data = JSON.parse(f.data) as Event;
    expect(f.event, "the SSE event name is the event's type").toBe(data.type);
    return data;
  });

describe("the response object", () => {
  it("carries reasoning, prose and calls as items, with the caller's namespaced names back", () => {
    const body = responsesResponse(
      outcome({ type: "tool_calls", content: "Looking.", reasoning: "Need the record.", calls: [{ id: "call_1", name: "crm__lookup", args: { id: "42" } }, { id: "call_2", name: "plain", args: "{bad" }] }),
      meta,
      shape,
    );
    expect(body).toMatchObject({ id: "resp_abc", object: "response", created_at: 1_800_000_000, status: "completed", error: null, model: "qwen3:8b", store: false, forge: { attempts: 1 } });
    expect(body.output).toEqual([
      { id: "rs_abc_0", type: "reasoning", summary: [{ type: "summary_text", text: "Need the record." }] },
      { id: "msg_abc_1", type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text: "Looking.", annotations: [], logprobs: [] }] },
      { id: "fc_abc_2", type: "function_call", status: "completed", call_id: "call_1", name: "lookup", namespace: "crm", arguments: '{"id":"42"}' },
      { id: "fc_abc_3", type: "function_call", status: "completed", call_id: "call_2", name: "plain", arguments: "{bad" },
    ]);
    expect(body.usage).toEqual({ input_tokens: 7, input_tokens_details: { cached_tokens: 0 }, output_tokens: 3, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 10 });
  });

  it("gives an empty text answer its message item", () => {
    expect(responsesResponse(outcome({ type: "text", content: "" }), { ...meta, guarded: false }, shape).output).toMatchObject([{ type: "message", content: [{ text: "" }] }]);
  });
});

describe("the event stream", () => {
  it("sends a judged call answer in OpenAI's order", () => {
    const encoder = new ResponsesStreamEncoder(meta, shape);
    const sent = events([...encoder.open(), ...encoder.finish(outcome({ type: "tool_calls", content: "Hi", calls: [{ id: "call_1", name: "crm__lookup", args: {} }] }), NOTHING_SENT)]);
    expect(sent.map((e) => e.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(sent[0]!.response).toMatchObject({ status: "in_progress", output: [], usage: null });
    expect(sent[8]!.item).toMatchObject({ type: "function_call", status: "in_progress", arguments: "", name: "lookup", namespace: "crm" });
    expect(sent[10]).toMatchObject({ name: "lookup", arguments: "{}" });
    expect(sent.at(-1)!.response).toMatchObject({ status: "completed", usage: { total_tokens: 10 }, forge: { attempts: 1 } });
  });

  it("ends a failed stream with an error event the openai SDK throws on, then response.failed", () => {
    const encoder = new ResponsesStreamEncoder(meta, shape);
    const sent = events([...encoder.open(), ...encoder.delta("content", "partial"), ...encoder.error(new HttpError(502, "api_error", "Backend unreachable"))]);
    const [error, failed] = sent.slice(-2);
    expect(error).toMatchObject({ type: "error", code: "server_error", message: "Backend unreachable", error: { type: "api_error", code: "server_error", message: "Backend unreachable" } });
    expect(failed!.response).toMatchObject({ status: "failed", error: { code: "server_error", message: "Backend unreachable" } });
  });

  it("keeps the connection alive with an SSE comment", () => {
    expect(new ResponsesStreamEncoder(meta, shape).ping()).toEqual({ comment: "keep-alive" });
  });

  const delta = fc.record({ channel: fc.constantFrom("content" as const, "reasoning" as const), text: fc.string({ minLength: 1, maxLength: 8 }) });
  const answer: fc.Arbitrary<ProxyAnswer> = fc.oneof(
    fc.record({ type: fc.constant("text" as const), content: fc.string({ maxLength: 600 }), reasoning: fc.option(fc.string({ minLength: 1, maxLength: 300 }), { nil: undefined }) }),
    fc.record({
      type: fc.constant("tool_calls" as const),
      content: fc.option(fc.string({ maxLength: 40 }), { nil: undefined }),
      calls: fc.array(fc.record({ id: fc.uuid(), name: fc.constantFrom("a", "crm__lookup"), args: fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 300 })) }), { minLength: 1, maxLength: 3 }),
    }),
  );

  it("is well formed for any live deltas and any answer (property)", () => {
    fc.assert(
      fc.property(fc.array(delta, { maxLength: 12 }), answer, fc.boolean(), (deltas, ans, live) => {
        const encoder = new ResponsesStreamEncoder(meta, shape);
        const frames = [...encoder.open()];
        const sentText = { content: "", reasoning: "" };
        if (live) {
          for (const d of deltas) {
            frames.push(...encoder.delta(d.channel, d.text));
            sentText[d.channel] += d.text;
          }
        }
        frames.push(...encoder.finish(outcome(ans), sentText));
        const sent = events(frames);
        expect(sent.map((e) => e.sequence_number)).toEqual(sent.map((_, i) => i));
        const added = sent.filter((e) => e.type === "response.output_item.added").map((e) => e.output_index);
        const done = sent.filter((e) => e.type === "response.output_item.done");
        expect(added).toEqual(added.map((_, i) => i));
        expect(done.map((e) => e.output_index)).toEqual(added);
        for (const d of done) {
          const item = d.item;
          const deltasOf = (type: string) => sent.filter((e) => e.type === type && e.item_id === item.id).map((e) => e.delta as string).join("");
          if (item.type === "message") expect(deltasOf("response.output_text.delta")).toBe(item.content[0].text);
          if (item.type === "reasoning") expect(deltasOf("response.reasoning_summary_text.delta")).toBe(item.summary[0].text);
          if (item.type === "function_call") expect(deltasOf("response.function_call_arguments.delta")).toBe(item.arguments);
        }
        const completed = sent.at(-1)!;
        expect(completed.type).toBe("response.completed");
        expect(completed.response.output).toEqual(done.map((d) => d.item));
        if (ans.type === "text") expect(done.some((d) => d.item.type === "message")).toBe(true);
        if (ans.type === "tool_calls") expect(done.filter((d) => d.item.type === "function_call")).toHaveLength(ans.calls.length);
      }),
      { numRuns: 300 },
    );
  });
});
