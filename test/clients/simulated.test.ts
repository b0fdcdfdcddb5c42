import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../src/core/errors.js";
import type { LLMResponse, StreamChunk } from "../../src/core/llm.js";
import { SimulatedClient, type OracleStep } from "../../src/clients/simulated.js";
import { supplierQuoteWorkflow } from "../../src/cli/demo-workflow.js";
import { oracleConversation, play, stepToResponse } from "./simulated-loop.js";

const demo = supplierQuoteWorkflow();
const specs = demo.workflow.getToolSpecs();

async function collect(stream: AsyncIterable<StreamChunk>): Promise<StreamChunk[]> {
  const out: StreamChunk[] = [];
  for await (const c of stream) out.push(c);
  return out;
}

function withoutIds(r: LLMResponse): LLMResponse {
  return r.type === "text" ? r : { ...r, toolCalls: r.toolCalls.map(({ id: _id, ...c }) => c) };
}

describe("SimulatedClient — clean profile", () => {
  it.each(["openai", "ollama"] as const)("returns exactly the oracle's steps over the whole workflow (%s)", async (apiFormat) => {
    const client = new SimulatedClient({ oracle: demo.oracle, workflow: demo.workflow, apiFormat, seed: 9 });
    const played = await play(demo, client);
    expect(played.terminal?.args).toEqual({ part_number: "PN-4471", supplier: "Acme Fasteners", quantity: 250, unit_price: 0.34 });
    expect(played.responses.map(withoutIds)).toEqual(played.steps.map(stepToResponse));
    expect(client.injected).toEqual([]);
    expect(client.calls).toBe(4);
    const ids = played.responses.flatMap((r) => (r.type === "tool_calls" ? r.toolCalls.map((c) => c.id) : []));
    if (apiFormat === "openai") expect(new Set(ids).size).toBe(ids.length);
    else expect(ids.every((id) => id === undefined)).toBe(true);
  });

  it("answers text when the oracle's step is text, with no fault even under chaos", async () => {
    const oracle = (): OracleStep => ({ text: "That is outside what I can help with." });
    for (let seed = 0; seed < 50; seed++) {
      const client = new SimulatedClient({ oracle, workflow: demo.workflow, profile: { name: "all-bare", rates: { bare_text: 1 } }, seed });
      expect(await client.send([{ role: "user", content: "tell me a joke" }], specs)).toEqual({ type: "text", content: "That is outside what I can help with." });
    }
  });
});

describe("SimulatedClient — determinism", () => {
  it("same seed + same conversation ⇒ same response; different seeds diverge", async () => {
    const wires = await Promise.all([0, 1, 2, 3].map((k) => oracleConversation(demo, k)));
    const run = async (seed: number) => {
      const client = new SimulatedClient({ oracle: demo.oracle, workflow: demo.workflow, profile: "chaotic", seed });
      return Promise.all(wires.map((w) => client.send(w, specs)));
    };
    expect(await run(5)).toEqual(await run(5));
    const all = await Promise.all(Array.from({ length: 10 }, (_, s) => run(s)));
    expect(new Set(all.map((r) => JSON.stringify(r))).size).toBeGreaterThan(1);
  });

  it("a request's answer does not depend on the requests before it", async () => {
    const wire = await oracleConversation(demo, 2);
    const fresh = new SimulatedClient({ oracle: demo.oracle, workflow: demo.workflow, profile: "chaotic", seed: 77 });
    const used = new SimulatedClient({ oracle: demo.oracle, workflow: demo.workflow, profile: "chaotic", seed: 77 });
    await used.send(await oracleConversation(demo, 0), specs);
    expect(await used.send(wire, specs)).toEqual(await fresh.send(wire, specs));
  });
});

describe("SimulatedClient — streaming", () => {
  it("FINAL equals send()'s response and the deltas rebuild it (property over seeds and turns)", async () => {
    const wires = await Promise.all([0, 1, 2, 3].map((k) => oracleConversation(demo, k)));
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 1e6 }), fc.integer({ min: 0, max: 3 }), fc.option(fc.integer({ min: 1, max: 9 }), { nil: undefined }), async (seed, k, chunkSize) => {
        const make = () => new SimulatedClient({ oracle: demo.oracle, workflow: demo.workflow, profile: "chaotic", seed, chunkSize });
        const sent = await make().send(wires[k]!, specs);
        const chunks = await collect(make().sendStream(wires[k]!, specs));
        const final = chunks.at(-1);
        expect(final).toEqual({ type: "final", response: sent });
        expect(chunks.filter((c) => c.type === "final")).toHaveLength(1);
        const text = (channel: string) => chunks.flatMap((c) => (c.type === "text_delta" && c.channel === channel ? [c.content] : [])).join("");
        expect(text("reasoning")).toBe(sent.reasoning ?? "");
        if (sent.type === "text") expect(text("content")).toBe(sent.content);
        else {
          sent.toolCalls.forEach((call, i) => {
            const deltas = chunks.filter((c) => c.type === "tool_call_delta" && c.index === i) as Extract<StreamChunk, { type: "tool_call_delta" }>[];
            expect(deltas[0]).toMatchObject({ name: call.tool, id: call.id });
            const args = deltas.map((d) => d.content).join("");
            expect(args).toBe(typeof call.args === "string" ? call.args : JSON.stringify(call.args));
          });
        }
      }),
      { numRuns: 60 },
    );
  });

  it("text arrives in several small deltas", async () => {
    const oracle = (): OracleStep => ({ text: "I can only help with supplier quotes for parts in our catalog, sorry." });
    const chunks = await collect(new SimulatedClient({ oracle, seed: 1 }).sendStream([{ role: "user", content: "hi" }]));
    const deltas = chunks.filter((c) => c.type === "text_delta");
    expect(deltas.length).toBeGreaterThan(3);
    expect(deltas.every((d) => d.content.length < 40)).toBe(true);
  });
});

describe("SimulatedClient — abort", () => {
  const wire = [{ role: "user" as const, content: demo.userInput }];

  it("rejects at once with the signal's reason when already aborted", async () => {
    const client = new SimulatedClient({ oracle: demo.oracle, workflow: demo.workflow });
    const ac = new AbortController();
    ac.abort();
    await expect(client.send(wire, specs, { signal: ac.signal })).rejects.toMatchObject({ name: "AbortError" });
    await expect(collect(client.sendStream(wire, specs, { signal: ac.signal }))).rejects.toMatchObject({ name: "AbortError" });
  });

  it("aborts a slow request", async () => {
    // Latency far beyond the test's timeout: a rejection at all means the abort cut the wait short.
    const client = new SimulatedClient({ oracle: demo.oracle, workflow: demo.workflow, latencyMs: 600_000 });
    const ac = new AbortController();
    setTimeout(() => ac.abort(new Error("user cancelled")), 20);
    await expect(client.send(wire, specs, { signal: ac.signal })).rejects.toThrow("user cancelled");
  });

  it("stops a stream mid-way", async () => {
    const oracle = (): OracleStep => ({ text: "word ".repeat(200) });
    const client = new SimulatedClient({ oracle, chunkSize: 3 });
    const ac = new AbortController();
    const seen: StreamChunk[] = [];
    const consume = async () => {
      for await (const c of client.sendStream(wire, specs, { signal: ac.signal })) {
        seen.push(c);
        if (seen.length === 5) ac.abort();
      }
    };
    await expect(consume()).rejects.toMatchObject({ name: "AbortError" });
    expect(seen).toHaveLength(5);
    expect(seen.some((c) => c.type === "final")).toBe(false);
  });
});

describe("SimulatedClient — options and surface", () => {
  it("estimates usage as chars/4 when asked", async () => {
    const client = new SimulatedClient({ oracle: demo.oracle, workflow: demo.workflow, usage: true, contextLength: 8192 });
    const wire = [{ role: "user" as const, content: demo.userInput }];
    const res = await client.send(wire, specs);
    const expectedIn = Math.ceil((JSON.stringify(wire).length + JSON.stringify(specs).length) / 4);
    expect(res.usage).toEqual({ inputTokens: expectedIn, outputTokens: expect.any(Number) });
    expect(res.usage!.outputTokens).toBeGreaterThan(0);
    expect(client.lastUsage).toEqual(res.usage);
    expect(await client.getContextLength()).toBe(8192);
    expect(await new SimulatedClient({ oracle: demo.oracle }).getContextLength()).toBeUndefined();
    expect((await new SimulatedClient({ oracle: demo.oracle }).send(wire, specs)).usage).toBeUndefined();
  });

  it("validates options and the oracle's answers loudly", async () => {
    const oracle = demo.oracle;
    expect(() => new SimulatedClient({} as never)).toThrow(InvalidArgumentError);
    expect(() => new SimulatedClient({ oracle, seed: 1.5 })).toThrow(/seed/);
    expect(() => new SimulatedClient({ oracle, apiFormat: "anthropic" as never })).toThrow(/apiFormat/);
    expect(() => new SimulatedClient({ oracle, chunkSize: 0 })).toThrow(/chunkSize/);
    expect(() => new SimulatedClient({ oracle, profile: "tiny" as never })).toThrow(/unknown profile "tiny"/);
    const wire = [{ role: "user" as const, content: "q" }];
    const offTools = new SimulatedClient({ oracle: () => ({ tool: "nope", args: {} }) });
    await expect(offTools.send(wire, specs)).rejects.toThrow(/"nope" is not among the tools offered/);
    const malformed = new SimulatedClient({ oracle: () => ({ tool: "lookup_part", args: "x" }) as never });
    await expect(malformed.send(wire, specs)).rejects.toThrow(/object args/);
  });
});
