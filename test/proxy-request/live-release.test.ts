import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { StreamError } from "../../src/core/errors.js";
import { LiveRelease, unsent } from "../../src/proxy-request/live-release.js";
import { releaseMode, type ProxyRequest } from "../../src/proxy-request/proxy-request.js";

const weather = { name: "get_weather", description: "", parameters: { type: "object" } };
const request = (extra: Partial<ProxyRequest> = {}): ProxyRequest => ({ model: "", messages: [], tools: [weather], toolChoice: undefined, stream: true, includeUsage: false, body: {}, ...extra });

describe("unsent", () => {
  it.each([
    ["Checking.\n\nIt is sunny.", "Checking.\n", "\nIt is sunny."],
    ["Checking. It is sunny.", "Checking.\n", "It is sunny."],
    ["Checking.", "Checking. ", ""],
    ["Let me check.", "", "Let me check."],
    ["Hi there", "Hi <|eot_id|>", "there"],
  ])("unsent(%j, %j) = %j", (full, sent, rest) => {
    expect(unsent(full, sent)).toBe(rest);
  });

  it("property: a sent prefix is never repeated", () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (a, b) => {
        expect(unsent(a + b, a)).toBe(b);
      }),
    );
  });
});

describe("LiveRelease", () => {
  it("releases judged prose and remembers it; a restart after text went out is a StreamError", () => {
    const out: string[] = [];
    const release = new LiveRelease(["get_weather"], (channel, text) => out.push(`${channel}:${text}`));
    release.delta("reasoning", "hmm");
    release.delta("content", "Let me check. <tool_call>{");
    expect(out).toEqual(["reasoning:hmm", "content:Let me check."]);
    expect(release.sent).toEqual({ content: "Let me check.", reasoning: "hmm" });
    expect(() => release.restart("malformed line")).toThrow(StreamError);
  });

  it("a restart before anything went out starts the judge afresh", () => {
    const out: string[] = [];
    const release = new LiveRelease(["get_weather"], (_channel, text) => out.push(text));
    release.delta("content", "<tool_call>");
    release.restart("malformed line");
    release.delta("content", "Plain prose.");
    expect(out).toEqual(["Plain prose."]);
  });
});

describe("releaseMode", () => {
  it.each([
    ["no tools", request({ tools: [] }), false, "live"],
    ["tool_choice none", request({ toolChoice: "none" }), false, "live"],
    ["tools", request(), false, "judged"],
    ["tool_choice required", request({ toolChoice: "required" }), false, "whole"],
    ["a named tool", request({ toolChoice: { type: "function", function: { name: "get_weather" } } }), false, "whole"],
    ["a JSON format", request({ format: { kind: "json_object" } }), false, "whole"],
    ["the respond tool", request(), true, "whole"],
  ] as const)("%s → %s", (_name, r, respond, mode) => {
    expect(releaseMode(r, respond)).toBe(mode);
  });
});
