/**
 * The demo workflow `npm start` and the tests run: prepare a supplier quote from a parts
 * catalog, public price tiers and a supplier's order history. Tools are deterministic and
 * in-memory; the oracle is what a perfect model would do next, derived from the tool
 * results it has seen (it reads prices out of the result JSON, never from the catalog).
 */
import { z } from "zod";
import { ToolResolutionError } from "../core/errors.js";
import { isPlainObject } from "../core/json-value.js";
import { defineTool } from "../core/tool.js";
import { Workflow } from "../core/workflow.js";
import type { Oracle, OracleStep, OracleView } from "../clients/simulated.js";

export interface PriceTier {
  min_qty: number;
  unit_price: number;
}
export interface PastOrder {
  date: string;
  quantity: number;
  unit_price: number;
}

const CATALOG: Record<string, { name: string; material: string; tiers: PriceTier[]; onHand: number }> = {
  "PN-4471": {
    name: "M8x30 hex bolt",
    material: "A2-70 stainless steel",
    tiers: [{ min_qty: 1, unit_price: 0.42 }, { min_qty: 100, unit_price: 0.35 }, { min_qty: 1000, unit_price: 0.29 }],
    onHand: 1800,
  },
  "PN-2210": {
    name: "6204-2RS deep groove ball bearing",
    material: "chrome steel, rubber seals",
    tiers: [{ min_qty: 1, unit_price: 3.8 }, { min_qty: 50, unit_price: 3.25 }, { min_qty: 500, unit_price: 2.9 }],
    onHand: 240,
  },
  "PN-9030": {
    name: "80mm 24V DC brushless fan",
    material: "PBT housing",
    tiers: [{ min_qty: 1, unit_price: 12.5 }, { min_qty: 25, unit_price: 11.2 }, { min_qty: 200, unit_price: 9.75 }],
    onHand: 35,
  },
};

const HISTORY: Record<string, Record<string, PastOrder[]>> = {
  "Acme Fasteners": {
    "PN-4471": [{ date: "2025-03-14", quantity: 500, unit_price: 0.31 }, { date: "2025-09-02", quantity: 300, unit_price: 0.32 }],
    "PN-2210": [{ date: "2025-06-20", quantity: 100, unit_price: 3.4 }],
  },
  "Baltic Bearings": {
    "PN-2210": [{ date: "2025-08-11", quantity: 150, unit_price: 2.95 }, { date: "2025-01-10", quantity: 200, unit_price: 2.7 }],
  },
  "Nordic Motion": { "PN-9030": [{ date: "2025-07-07", quantity: 40, unit_price: 10.1 }] },
};

const cents = (dollars: number) => Math.round(dollars * 100);

/**
 * The quoting rule: min(public tier price at `quantity`, most recent historical price × 1.05),
 * rounded to cents; without history, the tier price.
 *
 * @example
 * computeQuotePrice([{ min_qty: 1, unit_price: 0.42 }, { min_qty: 100, unit_price: 0.35 }],
 *   [{ date: "2025-09-02", quantity: 300, unit_price: 0.32 }], 250); // 0.34
 */
export function computeQuotePrice(tiers: readonly PriceTier[], orders: readonly PastOrder[], quantity: number): number {
  const tier = [...tiers].sort((a, b) => b.min_qty - a.min_qty).find((t) => quantity >= t.min_qty);
  if (!tier) throw new RangeError(`no price tier covers quantity ${quantity}`);
  const latest = [...orders].sort((a, b) => b.date.localeCompare(a.date))[0];
  const tierCents = cents(tier.unit_price);
  // Integer cents: 32 × 105 / 100 = 33.6 → 34, with no float drift.
  const historyCents = latest === undefined ? Infinity : Math.round((cents(latest.unit_price) * 105) / 100);
  return Math.min(tierCents, historyCents) / 100;
}

function partOrThrow(partNumber: string, tool: string) {
  const part = CATALOG[partNumber];
  if (!part) throw new ToolResolutionError(`No part "${partNumber}" in the catalog (known: ${Object.keys(CATALOG).join(", ")})`, tool);
  return part;
}

function historyOrThrow(supplier: string, partNumber: string, tool: string): PastOrder[] {
  const bySupplier = HISTORY[supplier];
  if (!bySupplier) throw new ToolResolutionError(`No supplier "${supplier}" (known: ${Object.keys(HISTORY).join(", ")})`, tool);
  return bySupplier[partNumber] ?? [];
}

const partNumber = z.string().describe('Catalog part number, e.g. "PN-4471"');

function buildTools(approvalAboveUsd: number | undefined) {
  const lookup_part = defineTool({
    name: "lookup_part",
    description: "Look up a part in the catalog: name, material and unit.",
    parameters: z.object({ part_number: partNumber }),
    execute: ({ part_number }) => {
      const part = partOrThrow(part_number, "lookup_part");
      return JSON.stringify({ part_number, name: part.name, material: part.material, unit: "each" });
    },
  });
  const get_public_pricing = defineTool({
    name: "get_public_pricing",
    description: "Public web price tiers (USD per unit by minimum quantity) for a part.",
    parameters: z.object({ part_number: partNumber }),
    prerequisites: ["lookup_part"],
    execute: ({ part_number }) => JSON.stringify({ part_number, currency: "USD", tiers: partOrThrow(part_number, "get_public_pricing").tiers }),
  });
  const get_supplier_history = defineTool({
    name: "get_supplier_history",
    description: "Past purchase orders of a part from a supplier (date, quantity, unit price).",
    parameters: z.object({ supplier: z.string().describe("Supplier name"), part_number: partNumber }),
    prerequisites: [{ tool: "lookup_part", args: { part_number: "$part_number" } }],
    execute: ({ supplier, part_number }) => {
      partOrThrow(part_number, "get_supplier_history");
      return JSON.stringify({ supplier, part_number, orders: historyOrThrow(supplier, part_number, "get_supplier_history") });
    },
  });
  const check_inventory = defineTool({
    name: "check_inventory",
    description: "Units of a part on hand in our warehouse.",
    parameters: z.object({ part_number: partNumber }),
    execute: ({ part_number }) => JSON.stringify({ part_number, on_hand: partOrThrow(part_number, "check_inventory").onHand, warehouse: "Rotterdam" }),
  });
  const submit_quote = defineTool({
    name: "submit_quote",
    description: "Submit the final quote. unit_price must follow the quoting rule in the instructions.",
    parameters: z.object({
      part_number: partNumber,
      supplier: z.string(),
      quantity: z.number().int().positive(),
      unit_price: z.number().positive().describe("USD per unit, rounded to cents"),
    }),
    // A quote above the limit goes out only once a person approved it (the run waits in awaitingHuman).
    needsApproval: approvalAboveUsd === undefined ? false : ({ quantity, unit_price }) => quantity * unit_price > approvalAboveUsd,
    execute: ({ part_number, supplier, quantity, unit_price }) => {
      const expected = computeQuotePrice(partOrThrow(part_number, "submit_quote").tiers, historyOrThrow(supplier, part_number, "submit_quote"), quantity);
      if (cents(unit_price) !== cents(expected)) {
        // A plain Error is a tool error the model must fix; the message states the rule, not the answer.
        throw new Error(`unit_price ${unit_price} does not follow the quoting rule (min of the tier price at ${quantity} units and the latest historical price x 1.05)`);
      }
      const total = (cents(unit_price) * quantity) / 100;
      return JSON.stringify({ quote_id: `Q-${part_number}-${quantity}`, part_number, supplier, quantity, unit_price, total, currency: "USD" });
    },
  });
  return { lookup_part, get_public_pricing, get_supplier_history, check_inventory, submit_quote };
}

/**
 * What the user asked for, read back out of the request text.
 *
 * @example
 * parseQuoteRequest("Prepare a quote for 250 units of part PN-4471 from Acme Fasteners.");
 * // { partNumber: "PN-4471", quantity: 250, supplier: "Acme Fasteners" }
 */
export function parseQuoteRequest(text: string): { partNumber: string; quantity: number; supplier: string } | undefined {
  const part = /\b(PN-\d{3,6})\b/i.exec(text)?.[1];
  const qty = /(\d[\d,]*)\s*(?:units?|pcs|pieces)\b/i.exec(text)?.[1];
  const supplier = /\bfrom (?:supplier )?([A-Z][\w&' -]*?)\s*(?:[.?!]|$)/.exec(text)?.[1];
  if (!part || !qty || !supplier) return undefined;
  return { partNumber: part.toUpperCase(), quantity: Number(qty.replaceAll(",", "")), supplier };
}

type Result = OracleView["results"][number];

/** The latest successful result of `tool` for this part whose content still parses. */
function latestData(view: OracleView, tool: string, partNumber: string): Record<string, unknown> | undefined {
  for (let i = view.results.length - 1; i >= 0; i--) {
    const r: Result = view.results[i]!;
    if (r.tool !== tool || r.isError || r.args.part_number !== partNumber) continue;
    try {
      const data: unknown = JSON.parse(r.content);
      if (isPlainObject(data)) return data;
    } catch {
      // Truncated by compaction: a real model would fetch it again, so keep looking / re-call.
    }
  }
  return undefined;
}

/**
 * The correct next step for the supplier-quote workflow, from the results seen so far.
 *
 * @example
 * supplierQuoteOracle({ results: [], userInput: "Quote 250 units of PN-4471 from Acme Fasteners.", toolNames: [], turn: 0 });
 * // { tool: "lookup_part", args: { part_number: "PN-4471" } }
 */
export const supplierQuoteOracle: Oracle = (view): OracleStep => {
  const request = parseQuoteRequest(view.userInput);
  if (!request) return { text: "Please tell me the part number (PN-xxxx), the quantity in units, and the supplier." };
  const { partNumber: part_number, quantity, supplier } = request;
  if (!latestData(view, "lookup_part", part_number)) {
    const unresolved = view.results.some((r) => r.tool === "lookup_part" && r.args.part_number === part_number && r.content.startsWith("[ToolResolutionError]"));
    if (unresolved) return { text: `I could not find part ${part_number} in the catalog, so I cannot prepare a quote for it.` };
    return { tool: "lookup_part", args: { part_number } };
  }
  // The quote needed a person's approval and they declined it: say so rather than repeat the call.
  if (view.results.some((r) => r.tool === "submit_quote" && r.content.startsWith("[Rejected]"))) {
    return { text: `I did not submit the quote for ${quantity} units of ${part_number}: the approver declined it.` };
  }
  const pricing = latestData(view, "get_public_pricing", part_number);
  const stock = latestData(view, "check_inventory", part_number);
  const pending = [
    ...(pricing ? [] : [{ tool: "get_public_pricing", args: { part_number } }]),
    ...(stock ? [] : [{ tool: "check_inventory", args: { part_number } }]),
  ];
  if (pending.length > 1) return { calls: pending };
  if (pending[0]) return pending[0];
  const history = latestData(view, "get_supplier_history", part_number);
  if (!history) return { tool: "get_supplier_history", args: { supplier, part_number } };
  const unit_price = computeQuotePrice(pricing!.tiers as PriceTier[], history.orders as PastOrder[], quantity);
  return { tool: "submit_quote", args: { part_number, supplier, quantity, unit_price } };
};

export interface SupplierQuoteOptions {
  partNumber?: string;
  quantity?: number;
  supplier?: string;
  company?: string;
  /** A quote whose total (quantity × unit_price) is above this many USD needs a person's approval. Default: none does. */
  approvalAboveUsd?: number;
}

/** The quote total above which the demo (`npm start`, `forge-ts visualize`) asks for approval. */
export const DEMO_APPROVAL_ABOVE_USD = 50;

/**
 * The demo: a fresh workflow, its oracle, the user's request and the prompt variables.
 *
 * @example
 * const { workflow, oracle, userInput, promptVars } = supplierQuoteWorkflow();
 * const client = new SimulatedClient({ oracle, workflow, profile: "small-model", seed: 1 });
 * await runner.run(workflow, userInput, { promptVars });
 */
export function supplierQuoteWorkflow(options: SupplierQuoteOptions = {}) {
  const { partNumber = "PN-4471", quantity = 250, supplier = "Acme Fasteners", company = "Northwind Industrial Supply", approvalAboveUsd } = options;
  const workflow = new Workflow({
    name: "supplier_quote",
    description: "Prepare a supplier quote from catalog data, public pricing and order history.",
    tools: buildTools(approvalAboveUsd),
    requiredSteps: ["lookup_part", "get_public_pricing", "get_supplier_history"],
    terminalTool: "submit_quote",
    systemPromptTemplate:
      "You are the purchasing assistant of {company}. To prepare a quote: look up the part, get its public " +
      "price tiers and the supplier's order history, then call submit_quote with unit_price = min(public tier " +
      "price at the requested quantity, most recent historical unit price x 1.05), rounded to cents. " +
      "Always act through the tools.",
  });
  const userInput = `Prepare a quote for ${quantity} units of part ${partNumber} from ${supplier}.`;
  return { workflow, oracle: supplierQuoteOracle, userInput, promptVars: { company } as Record<string, string> };
}
