/** What of an exhausted answer reaches the caller: offered tools only, within the limit. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { handedOn } from "../../src/proxy-request/handed-on.js";
import type { ProxyAnswer } from "../../src/proxy-request/proxy-request.js";

const calls = (...names: string[]): ProxyAnswer => ({ type: "tool_calls", calls: names.map((name, i) => ({ id: `c${i}`, name, args: {} })), content: "Sure." });

describe("handedOn", () => {
  it("leaves an answer of offered calls within the limit as it is", () => {
    const answer = calls("get_weather", "get_time");
    expect(handedOn(answer, ["get_weather", "get_time"], 64)).toEqual({ answer });
  });

  it("drops calls to tools the request did not offer, prototype names included; none left is the text", () => {
    const { answer, dropped } = handedOn(calls("delete_everything", "constructor", "__proto__", "toString"), ["get_weather"], 64);
    expect(answer).toEqual({ type: "text", content: "Sure." });
    expect(dropped).toEqual({ unoffered: 4, unofferedNames: ["delete_everything", "constructor", "__proto__", "toString"], overLimit: 0 });
  });

  it("keeps the offered ones beside, and cuts at the limit", () => {
    const { answer, dropped } = handedOn(calls("get_weather", "rm", ...Array.from({ length: 70 }, () => "get_weather")), ["get_weather"], 64);
    expect(answer.type === "tool_calls" && answer.calls.length).toBe(64);
    expect(dropped).toEqual({ unoffered: 1, unofferedNames: ["rm"], overLimit: 7 });
  });

  it("property: what is handed on is offered, within the limit, and every call is kept or counted", () => {
    const name = fc.constantFrom("a", "b", "c", "__proto__", "constructor", "hasOwnProperty", "x".repeat(100));
    fc.assert(
      fc.property(fc.array(name, { maxLength: 200 }), fc.uniqueArray(fc.constantFrom("a", "b", "c"), { maxLength: 3 }), fc.integer({ min: 1, max: 80 }), (names, offered, max) => {
        const { answer, dropped } = handedOn(calls(...names), offered, max);
        const kept = answer.type === "tool_calls" ? answer.calls : [];
        expect(kept.every((c) => (offered as readonly string[]).includes(c.name))).toBe(true);
        expect(kept.length).toBeLessThanOrEqual(max);
        expect(kept.length + (dropped?.unoffered ?? 0) + (dropped?.overLimit ?? 0)).toBe(names.length);
        expect(dropped?.unofferedNames.length ?? 0).toBeLessThanOrEqual(8);
        if (answer.type === "text") expect(answer.content).toBe("Sure.");
      }),
    );
  });
});
