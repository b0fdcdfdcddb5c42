import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compileJsonSchema } from "../../src/core/tool.js";
import { checkStructuredOutput, extractJsonAnswer, type OutputFormat } from "../../src/guardrails/structured-output.js";

const weather: OutputFormat = {
  kind: "json_schema",
  name: "weather",
  strict: true,
  schema: { type: "object", properties: { city: { type: "string" }, tempC: { type: "number" } }, required: ["city", "tempC"], additionalProperties: false },
};
const check = compileJsonSchema(weather.kind === "json_schema" ? weather.schema : {});

describe("extractJsonAnswer", () => {
  it.each([
    ['{"a": 1}', '{"a": 1}'],
    ['Sure! Here it is:\n```json\n{"a": 1}\n```\nAnything else?', '{"a": 1}'],
    ['```\n[1, 2]\n```', "[1, 2]"],
    ['The answer is {"a": {"b": [1]}} as requested.', '{"a": {"b": [1]}}'],
    ['<think>plan {"x":</think>{"a": 1}', '{"a": 1}'],
  ])("reads the JSON out of %j", (answer, text) => {
    expect(extractJsonAnswer(answer)?.text).toBe(text);
  });

  it("finds nothing in prose or in JSON cut off half way", () => {
    expect(extractJsonAnswer("It is sunny.")).toBeUndefined();
    expect(extractJsonAnswer('Sure! {"a":')).toBeUndefined();
  });

  it("any JSON object survives any prose and fence around it (property)", () => {
    const prose = fc.string().filter((s) => !/[{}[\]`"\\]/.test(s));
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), prose, prose, fc.boolean(), (value, before, after, fenced) => {
        const json = JSON.stringify(value);
        const answer = fenced ? `${before}\n\`\`\`json\n${json}\n\`\`\`\n${after}` : `${before} ${json} ${after}`;
        expect(extractJsonAnswer(answer)?.value).toEqual(JSON.parse(json));
      }),
    );
  });
});

describe("checkStructuredOutput", () => {
  it("accepts a matching answer and returns the JSON alone", () => {
    expect(checkStructuredOutput('Here:\n```json\n{"city": "Oslo", "tempC": 4}\n```', weather, check)).toEqual({ ok: true, json: '{"city": "Oslo", "tempC": 4}' });
  });

  it("names every failing path of a schema mismatch", () => {
    const r = checkStructuredOutput('{"city": 5}', weather, check);
    if (r.ok) throw new Error("expected a failure");
    expect(r.issues.join("\n")).toMatch(/city.*string/);
    expect(r.issues.join("\n")).toMatch(/tempC/);
  });

  it("json_object needs an object; truncated or empty answers say why", () => {
    expect(checkStructuredOutput("[1]", { kind: "json_object" })).toEqual({ ok: false, issues: ["the reply must be a JSON object ({...})"] });
    expect(checkStructuredOutput('Sure! {"a":', { kind: "json_object" })).toMatchObject({ ok: false, issues: [expect.stringMatching(/no complete JSON/)] });
    expect(checkStructuredOutput("  ", { kind: "json_object" })).toEqual({ ok: false, issues: ["the reply was empty"] });
  });
});
