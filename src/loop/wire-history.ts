/**
 * The history in wire form, kept across one run's model calls. `serializeMessages` walks the
 * whole history on every call; between two calls the history only grows by a few messages
 * (until compaction rewrites it), so this serializes just the new ones and hands out a copy of
 * the result: identical to `serializeMessages` (a property test holds it to that), O(new
 * messages) plus one array copy per call.
 *
 * Every entry kept across calls is frozen, and each call returns a fresh array, so a client
 * that edits what it is given cannot corrupt the next request.
 */
import { MessageType, type Message, type ToolCallInfo } from "../core/messages.js";
import { droppedResultStandIn, toApiMessage, type ApiFormat, type ReasoningReplay, type WireMessage } from "../core/wire-messages.js";

const standIn = (call: ToolCallInfo): WireMessage => Object.freeze(droppedResultStandIn(call));

/**
 * A message's wire form, frozen. Built here rather than through `wireMessageOf`'s shared cache:
 * a history serializes each message once (until compaction rewrites it), so the cache's
 * WeakMap entry per message would cost more than it saves.
 */
const wireOf = (m: Message, format: ApiFormat): WireMessage => Object.freeze(toApiMessage(m, format));

/**
 * @example
 * const wire = new WireHistory("openai", "none");
 * client.send(wire.serialize(context.messages), specs); // each call: only what was appended since
 */
export class WireHistory {
  readonly format: ApiFormat;
  readonly replay: ReasoningReplay;
  /** The messages serialized so far (own copy of the references: a caller's array is compared, never trusted). */
  #seen: Message[] = [];
  /** The wire form of #seen, without the stand-ins for calls still unanswered at its end. */
  #out: WireMessage[] = [];
  /** Reasoning waiting for the next assistant message. */
  #pending: string[] = [];
  /** openai: calls of the last tool-call message with no result yet. */
  #unanswered: ToolCallInfo[] = [];
  /** keep-last: the #out index and the message into which the replayed reasoning was folded. */
  #foldedAt = -1;
  #foldedFrom: Message | undefined;

  constructor(format: ApiFormat, replay: ReasoningReplay = "none") {
    this.format = format;
    this.replay = replay;
  }

  /** `serializeMessages(messages, format, { reasoningReplay })`, reusing the previous call's work. */
  serialize(messages: readonly Message[]): WireMessage[] {
    if (!this.#extendsSeen(messages)) this.#reset();
    for (let i = this.#seen.length; i < messages.length; i++) this.#add(messages[i]!);
    const wire = this.#out.slice();
    for (const call of this.#unanswered) wire.push(standIn(call));
    return wire;
  }

  /** Does `messages` start with every message serialized so far (same objects, same order)? */
  #extendsSeen(messages: readonly Message[]): boolean {
    const seen = this.#seen;
    if (messages.length < seen.length) return false;
    for (let i = seen.length - 1; i >= 0; i--) if (messages[i] !== seen[i]) return false;
    return true;
  }

  #reset(): void {
    this.#seen = [];
    this.#out = [];
    this.#pending = [];
    this.#unanswered = [];
    this.#foldedAt = -1;
    this.#foldedFrom = undefined;
  }

  #add(m: Message): void {
    this.#seen.push(m);
    const out = this.#out;
    if (m.meta.type === MessageType.REASONING) {
      if (this.replay === "full") this.#pending.push(m.content);
      else if (this.replay === "keep-last") {
        // Only the latest reasoning is replayed: the one before it is taken back out.
        if (this.#foldedAt >= 0) out[this.#foldedAt] = wireOf(this.#foldedFrom!, this.format);
        this.#foldedAt = -1;
        this.#foldedFrom = undefined;
        this.#pending = [m.content];
      }
      return;
    }
    const first = out[0];
    if (m.meta.type === MessageType.SUMMARY && first?.role === "system") {
      out[0] = Object.freeze({ ...first, content: [first.content, m.content].filter((x) => x).join("\n\n") });
      return;
    }
    if (this.format === "openai") {
      if (m.role === "tool") this.#unanswered = this.#unanswered.filter((c) => c.callId !== m.toolCallId);
      else this.#closeCalls();
      if (m.toolCalls?.length) this.#unanswered = [...m.toolCalls];
    }
    const wire = wireOf(m, this.format);
    if (this.#pending.length > 0 && m.role === "assistant") {
      const folded = [...this.#pending, m.content].filter((s) => s.length > 0).join("\n\n");
      if (this.replay === "keep-last") {
        this.#foldedAt = out.length;
        this.#foldedFrom = m;
      }
      out.push(Object.freeze({ ...wire, content: folded }));
      this.#pending = [];
    } else {
      out.push(wire);
    }
  }

  #closeCalls(): void {
    for (const call of this.#unanswered) this.#out.push(standIn(call));
    this.#unanswered = [];
  }
}
