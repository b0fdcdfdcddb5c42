import { describe, expect, it } from "vitest";
import { ToolResolutionError } from "../../src/core/errors.js";
import { computeQuotePrice, parseQuoteRequest, supplierQuoteOracle, supplierQuoteWorkflow } from "../../src/cli/demo-workflow.js";
import { play } from "../clients/simulated-loop.js";

const ctx = { signal: new AbortController().signal, idempotencyKey: "k", runId: "r", iteration: 0, callIndex: 0 };

describe("computeQuotePrice", () => {
  const tiers = [
    { min_qty: 1, unit_price: 0.42 },
    { min_qty: 100, unit_price: 0.35 },
    { min_qty: 1000, unit_price: 0.29 },
  ];
  it("takes the historical price x 1.05 when it is lower than the tier price (in cents)", () => {
    const orders = [
      { date: "2025-03-14", quantity: 500, unit_price: 0.31 },
      { date: "2025-09-02", quantity: 300, unit_price: 0.32 },
    ];
    expect(computeQuotePrice(tiers, orders, 250)).toBe(0.34); // tier 0.35, 0.32 x 1.05 = 0.336 → 0.34
  });
  it("takes the tier price for the quantity when it is lower, and without history", () => {
    expect(computeQuotePrice(tiers, [{ date: "2024-01-01", quantity: 1, unit_price: 0.4 }], 1000)).toBe(0.29);
    expect(computeQuotePrice(tiers, [], 99)).toBe(0.42);
  });
  it("fails loudly when no tier covers the quantity", () => {
    expect(() => computeQuotePrice([{ min_qty: 10, unit_price: 1 }], [], 5)).toThrow(RangeError);
  });
});

describe("parseQuoteRequest", () => {
  it("reads part, quantity and supplier from the request", () => {
    expect(parseQuoteRequest("Prepare a quote for 1,200 units of part pn-2210 from Baltic Bearings.")).toEqual({
      partNumber: "PN-2210",
      quantity: 1200,
      supplier: "Baltic Bearings",
    });
    expect(parseQuoteRequest("hello")).toBeUndefined();
  });
});

describe("supplierQuoteWorkflow", () => {
  it("declares the required steps, terminal tool, prerequisites and the {company} placeholder", () => {
    const { workflow, promptVars, userInput } = supplierQuoteWorkflow();
    expect(workflow.requiredSteps).toEqual(["lookup_part", "get_public_pricing", "get_supplier_history"]);
    expect(workflow.terminalTools).toEqual(["submit_quote"]);
    expect(workflow.tools.get_supplier_history!.prerequisites).toEqual([{ tool: "lookup_part", args: { part_number: "$part_number" } }]);
    expect(workflow.systemPromptTemplate).toContain("{company}");
    expect(workflow.buildSystemPrompt(promptVars)).toContain("Northwind Industrial Supply");
    expect(userInput).toBe("Prepare a quote for 250 units of part PN-4471 from Acme Fasteners.");
  });

  it("asks a person to approve quotes above approvalAboveUsd only when that is set", () => {
    expect(supplierQuoteWorkflow().workflow.tools.submit_quote!.needsApproval).toBeUndefined();
    const rule = supplierQuoteWorkflow({ approvalAboveUsd: 50 }).workflow.tools.submit_quote!.needsApproval as (args: unknown, ctx: unknown) => boolean;
    expect(rule({ part_number: "PN-4471", supplier: "Acme Fasteners", quantity: 250, unit_price: 0.34 }, { runId: "r", iteration: 1 })).toBe(true); // 85 USD
    expect(rule({ part_number: "PN-4471", supplier: "Acme Fasteners", quantity: 100, unit_price: 0.35 }, { runId: "r", iteration: 1 })).toBe(false); // 35 USD
  });

  it("tools throw ToolResolutionError for unknown parts and suppliers", async () => {
    const { workflow } = supplierQuoteWorkflow();
    await expect(async () => workflow.tools.lookup_part!.execute({ part_number: "PN-0000" }, ctx)).rejects.toSatisfy(ToolResolutionError.isInstance);
    await expect(async () => workflow.tools.get_supplier_history!.execute({ supplier: "Nobody", part_number: "PN-4471" }, ctx)).rejects.toSatisfy(
      ToolResolutionError.isInstance,
    );
  });

  it("submit_quote rejects a price that breaks the quoting rule without revealing the answer", async () => {
    const { workflow } = supplierQuoteWorkflow();
    const submit = workflow.tools.submit_quote!;
    const args = { part_number: "PN-4471", supplier: "Acme Fasteners", quantity: 250, unit_price: 0.35 };
    await expect(async () => submit.execute(args, ctx)).rejects.toThrow(/quoting rule/);
    await expect(async () => submit.execute(args, ctx)).rejects.not.toThrow(/0\.34/);
    const ok = JSON.parse(String(await submit.execute({ ...args, unit_price: 0.34 }, ctx)));
    expect(ok).toMatchObject({ quote_id: "Q-PN-4471-250", unit_price: 0.34, total: 85 });
  });
});

describe("supplierQuoteOracle", () => {
  const cases = [
    { partNumber: "PN-4471", quantity: 250, supplier: "Acme Fasteners", price: 0.34 },
    { partNumber: "PN-2210", quantity: 600, supplier: "Baltic Bearings", price: 2.9 },
    { partNumber: "PN-2210", quantity: 60, supplier: "Acme Fasteners", price: 3.25 },
    { partNumber: "PN-9030", quantity: 30, supplier: "Nordic Motion", price: 10.61 },
  ];
  it.each(cases)("alone, playing the tools, reaches submit_quote with the correct price ($partNumber x $quantity)", async (c) => {
    const demo = supplierQuoteWorkflow(c);
    const played = await play(demo);
    expect(played.terminal?.tool).toBe("submit_quote");
    expect(played.terminal?.args).toEqual({ part_number: c.partNumber, supplier: c.supplier, quantity: c.quantity, unit_price: c.price });
    // lookup, [pricing + inventory] batch, history, submit
    expect(played.steps.map((s) => ("calls" in s ? s.calls.map((x) => x.tool).join("+") : "tool" in s ? s.tool : "text"))).toEqual([
      "lookup_part",
      "get_public_pricing+check_inventory",
      "get_supplier_history",
      "submit_quote",
    ]);
  });

  it("answers in text when the part does not resolve, and asks when the request is unreadable", async () => {
    const played = await play(supplierQuoteWorkflow({ partNumber: "PN-0001" }));
    expect(played.terminal).toBeUndefined();
    expect(played.steps.at(-1)).toEqual({ text: expect.stringContaining("could not find part PN-0001") });
    expect(supplierQuoteOracle({ results: [], userInput: "hi", toolNames: [], turn: 0 })).toEqual({ text: expect.stringContaining("part number") });
  });

  it("re-fetches a result whose content no longer parses (e.g. truncated by compaction)", () => {
    const userInput = supplierQuoteWorkflow().userInput;
    const truncated = { tool: "lookup_part", args: { part_number: "PN-4471" }, content: '{"part_number":"PN-44…', isError: false };
    expect(supplierQuoteOracle({ results: [truncated], userInput, toolNames: [], turn: 1 })).toEqual({ tool: "lookup_part", args: { part_number: "PN-4471" } });
  });

  it("says in text that the quote was declined instead of sending it again", () => {
    const userInput = supplierQuoteWorkflow().userInput;
    const results = [
      { tool: "lookup_part", args: { part_number: "PN-4471" }, content: "{}", isError: false },
      { tool: "submit_quote", args: {}, content: '[Rejected] A person declined the call to "submit_quote": no. It did not run.', isError: true },
    ];
    expect(supplierQuoteOracle({ results, userInput, toolNames: [], turn: 5 })).toEqual({ text: expect.stringContaining("the approver declined it") });
  });

  it("retries only the call that failed in the batch", () => {
    const userInput = supplierQuoteWorkflow().userInput;
    const results = [
      { tool: "lookup_part", args: { part_number: "PN-4471" }, content: "{}", isError: false },
      { tool: "get_public_pricing", args: { part_number: "PN-4471" }, content: '{"tiers":[]}', isError: false },
      { tool: "check_inventory", args: { part_number: "PN-4471" }, content: "[Skipped] ...", isError: true },
    ];
    expect(supplierQuoteOracle({ results, userInput, toolNames: [], turn: 2 })).toEqual({ tool: "check_inventory", args: { part_number: "PN-4471" } });
  });
});
