/**
 * Stateful scenarios whose tools own real per-run state: an order store that answers an
 * unresolved reference with ToolResolutionError, a bin count that must cover every bin, and a
 * case file that collects findings. The factory builds a fresh store for every run.
 */
import { z } from "zod";
import { defineTool, ToolResolutionError, Workflow } from "../../src/core/index.js";
import { scenario, type EvalScenario } from "../scenario.js";
import { filler, planOracle } from "./oracle-kit.js";

interface OrderState {
  orders: Map<string, { item: string; status: "open" | "cancelled" }>;
  cancellations: number;
}

function treWorkflow(): { workflow: Workflow; state: OrderState } {
  const state: OrderState = { orders: new Map([["ORD-0007", { item: "desk lamp", status: "open" }], ["ORD-0012", { item: "chair", status: "open" }]]), cancellations: 0 };
  const lookup = defineTool({
    name: "lookup_order",
    description: "Look an order up by id (format ORD-NNNN).",
    parameters: z.object({ order_id: z.string() }),
    execute: ({ order_id }) => {
      const order = state.orders.get(order_id);
      if (!order) {
        const digits = order_id.replace(/\D/g, "").padStart(4, "0");
        // The arguments were well-formed; the data did not resolve. Not a tool error.
        throw new ToolResolutionError(`no order "${order_id}"; did you mean ORD-${digits}?`, "lookup_order");
      }
      return `order_id=${order_id} item=${order.item.replaceAll(" ", "_")} status=${order.status}`;
    },
  });
  const cancel = defineTool({
    name: "cancel_order",
    description: "Cancel an order that was looked up.",
    parameters: z.object({ order_id: z.string() }),
    prerequisites: [{ tool: "lookup_order", args: { order_id: "$order_id" } }],
    execute: ({ order_id }) => {
      const order = state.orders.get(order_id);
      if (!order) throw new Error(`no order ${order_id}`);
      if (order.status === "cancelled") throw new Error(`order ${order_id} is already cancelled`);
      order.status = "cancelled";
      state.cancellations++;
      return `order_id=${order_id} status=cancelled`;
    },
  });
  const workflow = new Workflow({
    name: "basic_2step_stateful_tre",
    tools: { lookup_order: lookup, cancel_order: cancel },
    requiredSteps: ["lookup_order"],
    terminalTool: "cancel_order",
    systemPromptTemplate: "You cancel orders. Look the order up first, then cancel it.",
  });
  return { workflow, state };
}

export const basic2stepStatefulTre: EvalScenario = scenario<OrderState>({
  name: "basic_2step_stateful_tre",
  description: "An unresolved order reference raises ToolResolutionError (not counted as a tool error); retry with the suggested id.",
  tags: ["stateful", "plumbing"],
  userInput: "Please cancel my order number 7.",
  idealIterations: 3,
  maxIterations: 8,
  budgetTokens: 8192,
  build: treWorkflow,
  validate: ({ args, state }) =>
    args.order_id === "ORD-0007" && state.orders.get("ORD-0007")?.status === "cancelled" && state.orders.get("ORD-0012")?.status === "open" && state.cancellations === 1,
  oracle: planOracle([
    { tool: "lookup_order", firstTry: { order_id: "7" }, args: () => ({ order_id: "ORD-0007" }) },
    { tool: "cancel_order", args: () => ({ order_id: "ORD-0007" }) },
  ]),
});

const BINS: Record<string, { counted: number; expected: number }> = {
  "B-1": { counted: 14, expected: 14 },
  "B-2": { counted: 9, expected: 12 },
  "B-3": { counted: 30, expected: 30 },
  "B-4": { counted: 2, expected: 5 },
};
const DISCREPANT = Object.entries(BINS).filter(([, b]) => b.counted !== b.expected).map(([id]) => id);

interface InventoryState {
  counted: Set<string>;
  submitted: string[][];
}

function inventoryWorkflow(): { workflow: Workflow; state: InventoryState } {
  const state: InventoryState = { counted: new Set(), submitted: [] };
  const list = defineTool({
    name: "list_bins",
    description: "List the bins of a warehouse zone.",
    parameters: z.object({ zone: z.string() }),
    execute: ({ zone }) => {
      if (zone !== "A") throw new Error(`unknown zone ${zone}; zones: A`);
      return `zone=A bins=${Object.keys(BINS).join("|")}`;
    },
  });
  const count = defineTool({
    name: "count_bin",
    description: "Physically count one bin (long scanner log).",
    parameters: z.object({ bin: z.string() }),
    execute: ({ bin }) => {
      const b = BINS[bin];
      if (!b) throw new Error(`unknown bin ${bin}`);
      state.counted.add(bin);
      return `bin=${bin} counted=${b.counted} expected=${b.expected}\n${filler(bin, 1000)}`;
    },
  });
  const submit = defineTool({
    name: "submit_inventory",
    description: "Submit the audit with the bins whose count differs from expected.",
    parameters: z.object({ discrepant_bins: z.array(z.string()) }),
    execute: ({ discrepant_bins }) => {
      state.submitted.push([...discrepant_bins]);
      return "inventory submitted";
    },
  });
  const workflow = new Workflow({
    name: "inventory_audit",
    tools: { list_bins: list, count_bin: count, submit_inventory: submit },
    requiredSteps: ["list_bins", "count_bin"],
    terminalTool: "submit_inventory",
    systemPromptTemplate: "You run inventory audits: list the bins, count every one, submit the discrepancies.",
  });
  return { workflow, state };
}

export const inventoryAudit: EvalScenario = scenario<InventoryState>({
  name: "inventory_audit",
  description: "Count every bin of a zone under a small budget; every bin must really be counted.",
  tags: ["stateful", "compaction"],
  userInput: "Audit warehouse zone A.",
  idealIterations: 6,
  maxIterations: 14,
  budgetTokens: 1536,
  build: inventoryWorkflow,
  validate: ({ args, state }) =>
    state.counted.size === Object.keys(BINS).length &&
    state.submitted.length === 1 &&
    [...(args.discrepant_bins as string[])].sort().join(",") === DISCREPANT.join(","),
  oracle: planOracle([
    { tool: "list_bins", args: () => ({ zone: "A" }) },
    ...Object.keys(BINS).map((bin) => ({ tool: "count_bin", args: () => ({ bin }) })),
    { tool: "submit_inventory", args: () => ({ discrepant_bins: [...DISCREPANT] }) },
  ]),
});

interface CaseState {
  cases: Map<string, { supplier: string; findings: string[]; closed: boolean }>;
}

const OVERBILLED = ["INV-3", "INV-7"];

function deepDiveWorkflow(): { workflow: Workflow; state: CaseState } {
  const state: CaseState = { cases: new Map() };
  const caseOf = (id: string) => {
    const c = state.cases.get(id);
    if (!c) throw new Error(`no open case ${id}; open one with open_case`);
    return c;
  };
  const open = defineTool({
    name: "open_case",
    description: "Open an investigation case for a supplier.",
    parameters: z.object({ supplier_id: z.string() }),
    execute: ({ supplier_id }) => {
      const id = `C-${state.cases.size + 9}`;
      state.cases.set(id, { supplier: supplier_id, findings: [], closed: false });
      return `case_id=${id} supplier=${supplier_id}`;
    },
  });
  const invoices = defineTool({
    name: "fetch_invoices",
    description: "Invoices billed under a case (long output).",
    parameters: z.object({ case_id: z.string() }),
    execute: ({ case_id }) => {
      caseOf(case_id);
      return `case_id=${case_id} invoices=12 above_rate_cap=${OVERBILLED.join("|")}\n${filler("inv", 1100)}`;
    },
  });
  const finding = defineTool({
    name: "add_finding",
    description: "Record one overbilled invoice on the case.",
    parameters: z.object({ case_id: z.string(), invoice: z.string() }),
    prerequisites: ["fetch_invoices"],
    execute: ({ case_id, invoice }) => {
      const c = caseOf(case_id);
      if (!c.findings.includes(invoice)) c.findings.push(invoice);
      return `case_id=${case_id} findings=${c.findings.length}`;
    },
  });
  const close = defineTool({
    name: "close_case",
    description: "Close the case with the number of overbilled invoices.",
    parameters: z.object({ case_id: z.string(), overbilled_count: z.number().int() }),
    execute: ({ case_id }) => {
      const c = caseOf(case_id);
      c.closed = true;
      return `case_id=${case_id} closed=true`;
    },
  });
  const workflow = new Workflow({
    name: "supplier_deep_dive",
    tools: { open_case: open, fetch_invoices: invoices, add_finding: finding, close_case: close },
    requiredSteps: ["open_case", "fetch_invoices", "add_finding"],
    terminalTool: "close_case",
    systemPromptTemplate: "You investigate supplier billing. Record every overbilled invoice as a finding before closing.",
  });
  return { workflow, state };
}

export const supplierDeepDive: EvalScenario = scenario<CaseState>({
  name: "supplier_deep_dive",
  description: "Open a case, read long invoices, record each overbilled invoice, close with the count.",
  tags: ["stateful", "compaction", "reasoning"],
  userInput: "Investigate supplier S-102 for overbilling.",
  idealIterations: 5,
  maxIterations: 14,
  budgetTokens: 1536,
  build: deepDiveWorkflow,
  validate: ({ args, state }) => {
    const c = state.cases.get(String(args.case_id));
    return state.cases.size === 1 && c !== undefined && c.closed && [...c.findings].sort().join(",") === OVERBILLED.join(",") && args.overbilled_count === OVERBILLED.length;
  },
  oracle: planOracle([
    { tool: "open_case", args: () => ({ supplier_id: "S-102" }) },
    { tool: "fetch_invoices", args: (s) => ({ case_id: s.get("open_case", "case_id", "C-9") }) },
    ...OVERBILLED.map((invoice) => ({ tool: "add_finding", args: (s: import("./oracle-kit.js").Seen) => ({ case_id: s.get("open_case", "case_id", "C-9"), invoice }) })),
    { tool: "close_case", args: (s) => ({ case_id: s.get("open_case", "case_id", "C-9"), overbilled_count: OVERBILLED.length }) },
  ]),
});

export const STATEFUL_CUSTOM: EvalScenario[] = [basic2stepStatefulTre, inventoryAudit, supplierDeepDive];
