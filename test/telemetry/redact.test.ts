import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { redactArgs, REDACTED } from "../../src/telemetry/redact.js";
import { defineTool } from "../../src/core/tool.js";
import { z } from "zod";

describe("redactArgs", () => {
  it("masks named keys at any depth, arrays included, and leaves the input untouched", () => {
    const args = { user: "ann", password: "hunter2", nested: { token: "t", keep: 1 }, list: [{ token: "u" }] };
    const copy = structuredClone(args);
    expect(redactArgs(args, ["password", "token"])).toEqual({ user: "ann", password: REDACTED, nested: { token: REDACTED, keep: 1 }, list: [{ token: REDACTED }] });
    expect(args).toEqual(copy);
  });

  it("returns the same value when nothing is to be masked", () => {
    const args = { a: 1 };
    expect(redactArgs(args, undefined)).toBe(args);
    expect(redactArgs(args, [])).toBe(args);
  });

  it("property: every masked key reads [redacted]; a value without masked keys comes back equal", () => {
    const keyArb = fc.constantFrom("a", "b", "token", "password");
    const leaks = (v: unknown, keys: string[]): boolean =>
      Array.isArray(v) ? v.some((x) => leaks(x, keys))
        : v !== null && typeof v === "object" ? Object.entries(v).some(([k, x]) => (keys.includes(k) ? x !== REDACTED : leaks(x, keys)))
          : false;
    const hasKey = (v: unknown, keys: string[]): boolean =>
      Array.isArray(v) ? v.some((x) => hasKey(x, keys))
        : v !== null && typeof v === "object" ? Object.entries(v).some(([k, x]) => keys.includes(k) || hasKey(x, keys))
          : false;
    const json = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: "small" }, fc.integer(), fc.string(), fc.array(tie("value"), { maxLength: 3 }), fc.dictionary(keyArb, tie("value"), { maxKeys: 3 })),
    })).value;
    fc.assert(
      fc.property(json, fc.subarray(["token", "password"]), (value, keys) => {
        const out = redactArgs(value, keys);
        expect(leaks(out, keys)).toBe(false);
        if (!hasKey(value, keys)) expect(out).toEqual(value);
      }),
    );
  });
});

describe("defineTool redact", () => {
  const base = { name: "login", description: "d", parameters: z.object({ password: z.string() }), execute: () => "ok" };
  it("keeps the list on the tool", () => {
    expect(defineTool({ ...base, redact: ["password"] }).redact).toEqual(["password"]);
  });
  it("refuses a list that is not argument names", () => {
    expect(() => defineTool({ ...base, redact: "password" as unknown as string[] })).toThrow(/redact must be an array/);
    expect(() => defineTool({ ...base, redact: [""] })).toThrow(/redact must be an array/);
  });
});
