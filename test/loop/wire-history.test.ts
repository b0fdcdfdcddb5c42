/**
 * WireHistory (incremental serialization) must give exactly what serializeMessages gives for
 * the same history, call after call, through appends, compaction rewrites, reasoning replay
 * and unanswered calls; and what it hands out must not feed back into the next call.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createMessage, MessageType, type Message } from "../../src/core/messages.js";
import { serializeMessages, type ApiFormat, type ReasoningReplay } from "../../src/core/wire-messages.js";
import { WireHistory } from "../../src/loop/wire-history.js";

const FC = { seed: 20261123, numRuns: 300 };

/** One message of the kinds the loop writes; calls get ids the next results may answer. */
const message: fc.Arbitrary<Message> = fc.oneof(
  fc.string({ maxLength: 8 }).map((t) => createMessage("user", t, MessageType.USER_INPUT)),
  fc.string({ maxLength: 8 }).map((t) => createMessage("assistant", t, MessageType.TEXT_RESPONSE)),
  fc.string({ maxLength: 8 }).map((t) => createMessage("assistant", t, MessageType.REASONING)),
  fc.string({ maxLength: 8 }).map((t) => createMessage("system", t, MessageType.SUMMARY)),
  fc.string({ maxLength: 8 }).map((t) => createMessage("user", t, MessageType.RETRY_NUDGE)),
  fc.array(fc.constantFrom("c1", "c2", "c3"), { minLength: 1, maxLength: 3 }).map((ids) =>
    createMessage("assistant", "", MessageType.TOOL_CALL, { toolCalls: ids.map((callId) => ({ name: "t", args: { id: callId }, callId })) }),
  ),
  fc.constantFrom("c1", "c2", "c3").map((callId) => createMessage("tool", `r${callId}`, MessageType.TOOL_RESULT, { toolName: "t", toolCallId: callId })),
);

/** A run's histories as the loop hands them over: mostly appends, sometimes a rewrite (compaction). */
const histories = fc
  .tuple(
    fc.boolean(),
    fc.array(fc.tuple(fc.constantFrom("append", "append", "append", "rewrite"), fc.array(message, { maxLength: 4 })), { maxLength: 12 }),
  )
  .map(([withSystem, ops]) => {
    let current: Message[] = withSystem ? [createMessage("system", "sys", MessageType.SYSTEM_PROMPT)] : [];
    const out: Message[][] = [current];
    for (const [op, added] of ops) {
      // A rewrite keeps the head (the system prompt) and replaces the rest, as compaction does.
      current = op === "append" ? current.concat(added) : current.slice(0, 1).concat(added);
      out.push(current);
    }
    return out;
  });

const formats: ApiFormat[] = ["openai", "ollama"];
const replays: ReasoningReplay[] = ["none", "keep-last", "full"];

describe("WireHistory", () => {
  for (const format of formats) {
    for (const replay of replays) {
      it(`equals serializeMessages on every call (${format}, reasoning ${replay})`, () => {
        fc.assert(
          fc.property(histories, (runs) => {
            const history = new WireHistory(format, replay);
            for (const messages of runs) {
              const got = history.serialize(messages);
              expect(got).toEqual(serializeMessages(messages, format, { reasoningReplay: replay }));
              // A client that scribbles on its array cannot change the next request.
              got.push({ role: "user", content: "scribble" });
              got.reverse();
            }
          }),
          FC,
        );
      });
    }
  }

  it("hands out frozen wire messages (a client editing one in place fails loudly)", () => {
    const history = new WireHistory("openai");
    const wire = history.serialize([createMessage("user", "hi", MessageType.USER_INPUT)]);
    expect(() => {
      (wire[0] as { content: string }).content = "changed";
    }).toThrow(TypeError);
  });

  it("serializes only what was appended (earlier wire objects are reused)", () => {
    const history = new WireHistory("openai");
    const first = [createMessage("system", "s", MessageType.SYSTEM_PROMPT), createMessage("user", "u", MessageType.USER_INPUT)];
    const a = history.serialize(first);
    const b = history.serialize([...first, createMessage("assistant", "x", MessageType.TEXT_RESPONSE)]);
    expect(b[0]).toBe(a[0]);
    expect(b[1]).toBe(a[1]);
    expect(b).toHaveLength(3);
  });
});
