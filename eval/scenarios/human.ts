/**
 * Human-in-the-loop scenarios: a refund desk whose refunds above a limit wait for a person's
 * approval and whose model may ask the customer a question. The person is an oracle too
 * (`person`, the runner's `onHumanRequest`): they approve, approve with a lower amount, reject
 * with a reason the model must act on, or answer. Validation reads the desk's own records, so
 * "the refund ran once, as approved" and "the declined call never ran" are checked, not assumed.
 */
import { z } from "zod";
import { defineTool, humanInputTool, ToolResolutionError, Workflow } from "../../src/core/index.js";
import type { HumanDecision, HumanRequest } from "../../src/loop/human.js";
import { scenario, type EvalScenario, type Person, type TerminalCall } from "../scenario.js";
import { planOracle, unlessRejected, type PlanStep, type Seen } from "./oracle-kit.js";
import { statefulVariant, type LedgerState } from "./stateful-variant.js";

/** Refunds above this many USD need a person's approval. */
export const REFUND_LIMIT_USD = 100;

const ORDERS: Record<string, { item: string; item_usd: number; shipping_usd: number }> = {
  "ORD-1042": { item: "standing_desk", item_usd: 340, shipping_usd: 0 },
  "ORD-1187": { item: "espresso_machine", item_usd: 480, shipping_usd: 0 },
  "ORD-1220": { item: "2x_office_chair", item_usd: 260, shipping_usd: 0 },
  "ORD-1305": { item: "floor_lamp", item_usd: 100, shipping_usd: 50 },
  "ORD-2077": { item: "electric_kettle", item_usd: 45, shipping_usd: 0 },
  "ORD-2078": { item: "toaster", item_usd: 60, shipping_usd: 0 },
};
const total = (orderId: string) => ORDERS[orderId]!.item_usd + ORDERS[orderId]!.shipping_usd;
const digits = (orderId: string) => orderId.replace(/\D/g, "");

interface Filed {
  id: string;
  order_id: string;
  amount_usd: number;
}

/** The desk's records: what really ran. */
export interface DeskState {
  refunds: Filed[];
  escalations: Filed[];
}

function refundDesk(): { workflow: Workflow; state: DeskState } {
  const state: DeskState = { refunds: [], escalations: [] };
  const orderOf = (order_id: string, tool: string) => {
    const order = ORDERS[order_id];
    if (!order) throw new ToolResolutionError(`no order "${order_id}" (ids look like ORD-NNNN)`, tool);
    return order;
  };
  const lookup = defineTool({
    name: "lookup_order",
    description: "Look an order up by id (format ORD-NNNN).",
    parameters: z.object({ order_id: z.string() }),
    execute: ({ order_id }) => {
      const o = orderOf(order_id, "lookup_order");
      return `order_id=${order_id} item=${o.item} item_usd=${o.item_usd} shipping_usd=${o.shipping_usd} total_usd=${total(order_id)} status=delivered`;
    },
  });
  const refund = defineTool({
    name: "issue_refund",
    description: `Refund an order (one refund per order). Refunds above ${REFUND_LIMIT_USD} USD wait for a person's approval.`,
    parameters: z.object({ order_id: z.string(), amount_usd: z.number().positive() }),
    prerequisites: [{ tool: "lookup_order", args: { order_id: "$order_id" } }],
    needsApproval: ({ amount_usd }) => amount_usd > REFUND_LIMIT_USD,
    execute: ({ order_id, amount_usd }) => {
      orderOf(order_id, "issue_refund");
      // One refund per order: a repeated call cannot pay twice, and a large refund cannot be split under the limit.
      const earlier = state.refunds.find((r) => r.order_id === order_id);
      if (earlier) throw new Error(`order ${order_id} already has refund ${earlier.id}; one refund per order`);
      if (amount_usd > total(order_id)) throw new Error(`amount_usd ${amount_usd} exceeds the order total ${total(order_id)}`);
      const id = `RF-${digits(order_id)}`;
      state.refunds.push({ id, order_id, amount_usd });
      return `refund_id=${id} order_id=${order_id} amount_usd=${amount_usd}`;
    },
  });
  const escalate = defineTool({
    name: "escalate_to_manager",
    description: "Hand a refund to a manager, who decides it later.",
    parameters: z.object({ order_id: z.string(), amount_usd: z.number().positive(), note: z.string() }),
    prerequisites: [{ tool: "lookup_order", args: { order_id: "$order_id" } }],
    execute: ({ order_id, amount_usd }) => {
      orderOf(order_id, "escalate_to_manager");
      const id = `ESC-${digits(order_id)}`;
      state.escalations.push({ id, order_id, amount_usd });
      return `escalation_id=${id} order_id=${order_id} amount_usd=${amount_usd}`;
    },
  });
  const askUser = humanInputTool({
    name: "ask_user",
    description: "Ask the customer a question; their answer is the result.",
    parameters: z.object({ question: z.string() }),
  });
  const reply = defineTool({
    name: "reply_to_customer",
    description: "Tell the customer what was done (the final answer).",
    parameters: z.object({
      order_id: z.string(),
      refunded_usd: z.number().describe("0 when nothing was refunded"),
      refund_id: z.string().optional(),
      escalation_id: z.string().optional(),
      message: z.string(),
    }),
    execute: ({ message }) => message,
  });
  const workflow = new Workflow({
    name: "refund_desk",
    tools: { lookup_order: lookup, issue_refund: refund, escalate_to_manager: escalate, ask_user: askUser, reply_to_customer: reply },
    requiredSteps: ["lookup_order"],
    terminalTool: "reply_to_customer",
    systemPromptTemplate:
      `You handle refund requests. Look the order up first. Refunds above ${REFUND_LIMIT_USD} USD go to a person for approval; ` +
      "if a person declines a call, follow their reason (a smaller refund, or escalate_to_manager) instead of repeating it. " +
      "If you do not know which order the customer means, ask them with ask_user; never guess. Finish with reply_to_customer.",
  });
  return { workflow, state };
}

const filed = (list: readonly Filed[], expected: readonly Filed[]) => JSON.stringify(list) === JSON.stringify(expected);

/** The desk holds exactly these refunds and escalations, and the reply reports them. */
function deskShows(orderId: string, expected: { refund?: number; escalation?: number }) {
  const refunds = expected.refund === undefined ? [] : [{ id: `RF-${digits(orderId)}`, order_id: orderId, amount_usd: expected.refund }];
  const escalations = expected.escalation === undefined ? [] : [{ id: `ESC-${digits(orderId)}`, order_id: orderId, amount_usd: expected.escalation }];
  return ({ args, state }: TerminalCall<DeskState>): boolean =>
    filed(state.refunds, refunds) &&
    filed(state.escalations, escalations) &&
    args.order_id === orderId &&
    args.refunded_usd === (expected.refund ?? 0) &&
    args.refund_id === refunds[0]?.id &&
    args.escalation_id === escalations[0]?.id;
}

/** What ran on the desk, seen from the stateful variant's ledger: exactly these calls succeeded. */
function ledgerShows(ran: readonly { tool: string; args: Record<string, unknown> }[]) {
  return ({ state }: TerminalCall<LedgerState>): boolean => {
    const effects = state.ledger.filter((e) => e.ok && (e.tool === "issue_refund" || e.tool === "escalate_to_manager"));
    // Only the arguments that matter: an escalation's note is the model's own words.
    const seen = effects.map((e, i) => ({ tool: e.tool, args: Object.fromEntries(Object.keys(ran[i]?.args ?? {}).map((k) => [k, e.args[k]])) }));
    return JSON.stringify(seen) === JSON.stringify(ran);
  };
}

const reject = (reason: string): HumanDecision => ({ type: "reject", reason });
const approve: HumanDecision = { type: "approve" };

/**
 * A person who answers questions with `orderId` and decides refunds with `onRefund`; anything
 * else they did not expect (a guessed order, an improvised amount) is declined with a reason.
 */
function personFor(orderId: string, onRefund: (args: Record<string, unknown>) => HumanDecision): Person {
  return (request: HumanRequest) => {
    if (request.kind === "input") return { type: "answer", answer: `It's order ${orderId}.` };
    if (request.tool !== "issue_refund" || request.args.order_id !== orderId) return reject(`that is not the order the customer asked about (${orderId})`);
    return onRefund(request.args);
  };
}

const lookupStep = (orderId: string): PlanStep => ({ tool: "lookup_order", args: () => ({ order_id: orderId }) });
const fullRefund = (orderId: string): PlanStep => ({ tool: "issue_refund", args: () => ({ order_id: orderId, amount_usd: total(orderId) }) });
/** Reports what the desk said it did (a refund's amount as it ran, which a person may have lowered). */
const replyRefunded = (orderId: string): PlanStep => ({
  tool: "reply_to_customer",
  args: (s: Seen) => ({
    order_id: orderId,
    refunded_usd: Number(s.get("issue_refund", "amount_usd", "0")),
    refund_id: s.get("issue_refund", "refund_id", "none"),
    message: `Your refund of ${s.get("issue_refund", "amount_usd", "0")} USD is on its way.`,
  }),
});

const base = { tags: ["human"], maxIterations: 10, budgetTokens: 8192, build: refundDesk };

export const humanApprovalGranted: EvalScenario = scenario<DeskState>({
  ...base,
  name: "human_approval_granted",
  description: "A refund above the limit waits for a person, who approves it; it runs once and the reply reports it.",
  userInput: "Please refund order ORD-1042 in full, the desk arrived broken.",
  idealIterations: 3,
  validate: deskShows("ORD-1042", { refund: 340 }),
  oracle: planOracle([lookupStep("ORD-1042"), fullRefund("ORD-1042"), replyRefunded("ORD-1042")]),
  person: personFor("ORD-1042", (args) => (args.amount_usd === 340 ? approve : reject("the customer asked for the full 340 USD"))),
});

export const humanApprovalRejected: EvalScenario = scenario<DeskState>({
  ...base,
  name: "human_approval_rejected",
  description: "The person declines a large refund (needs a manager); the refund never runs and the model escalates instead.",
  userInput: "Refund order ORD-1187 in full please, the espresso machine leaks.",
  idealIterations: 4,
  validate: deskShows("ORD-1187", { escalation: 480 }),
  oracle: unlessRejected("issue_refund", [lookupStep("ORD-1187"), fullRefund("ORD-1187"), replyRefunded("ORD-1187")], [
    lookupStep("ORD-1187"),
    { tool: "escalate_to_manager", args: () => ({ order_id: "ORD-1187", amount_usd: total("ORD-1187"), note: "full refund asked; declined by a person: needs a manager" }) },
    {
      tool: "reply_to_customer",
      args: (s) => ({ order_id: "ORD-1187", refunded_usd: 0, escalation_id: s.get("escalate_to_manager", "escalation_id", "none"), message: "A manager will decide your refund." }),
    },
  ]),
  person: personFor("ORD-1187", (args) => (Number(args.amount_usd) > REFUND_LIMIT_USD ? reject("needs a manager: refunds this large are decided by a manager, escalate it") : approve)),
});

export const humanRejectedSmaller: EvalScenario = scenario<DeskState>({
  ...base,
  name: "human_rejected_smaller",
  description: "The person declines the full refund (shipping is not refundable); the model refunds the item price, within the limit.",
  userInput: "I want my money back for order ORD-1305, the lamp flickers.",
  idealIterations: 4,
  validate: deskShows("ORD-1305", { refund: 100 }),
  oracle: unlessRejected("issue_refund", [lookupStep("ORD-1305"), fullRefund("ORD-1305"), replyRefunded("ORD-1305")], [
    lookupStep("ORD-1305"),
    { tool: "issue_refund", args: (s) => ({ order_id: "ORD-1305", amount_usd: Number(s.get("lookup_order", "item_usd", "0")) }) },
    replyRefunded("ORD-1305"),
  ]),
  person: personFor("ORD-1305", (args) =>
    Number(args.amount_usd) > ORDERS["ORD-1305"]!.item_usd ? reject("shipping is not refundable: refund the item price only") : approve,
  ),
});

export const humanAskUser: EvalScenario = scenario<DeskState>({
  ...base,
  name: "human_ask_user",
  description: "The customer does not say which order; the model asks (a human-input tool), the answer names it, and the refund uses it.",
  userInput: "Please refund the kettle I bought from you, it stopped working.",
  idealIterations: 4,
  validate: deskShows("ORD-2077", { refund: 45 }),
  oracle: (view) => {
    // The order is whatever the customer answered; until then, nothing is known.
    const answered = view.results.findLast((r) => r.tool === "ask_user" && !r.isError)?.content.match(/ORD-\d{4}/)?.[0];
    const order = answered ?? "ORD-0000";
    return planOracle([
      { tool: "ask_user", args: () => ({ question: "Which order number was the kettle on?" }) },
      lookupStep(order),
      { tool: "issue_refund", args: (s) => ({ order_id: order, amount_usd: Number(s.get("lookup_order", "total_usd", "0")) }) },
      replyRefunded(order),
    ])(view);
  },
  person: personFor("ORD-2077", () => approve),
});

export const humanApprovalEdited: EvalScenario = scenario<DeskState>({
  ...base,
  name: "human_approval_edited",
  description: "The person approves the refund with a lower amount (one of two chairs was broken); the edited call runs and the reply reports it.",
  userInput: "Refund order ORD-1220 in full, one of the chairs came broken.",
  idealIterations: 3,
  validate: deskShows("ORD-1220", { refund: 130 }),
  oracle: planOracle([lookupStep("ORD-1220"), fullRefund("ORD-1220"), replyRefunded("ORD-1220")]),
  person: personFor("ORD-1220", (args) => (Number(args.amount_usd) > 130 ? { type: "approve", args: { ...args, amount_usd: 130 } } : approve)),
});

const PLAIN = [humanApprovalGranted, humanApprovalRejected, humanRejectedSmaller, humanAskUser, humanApprovalEdited];

/** What each scenario's desk must have run, as the stateful variant's ledger records it. */
const RAN: Record<string, { tool: string; args: Record<string, unknown> }[]> = {
  human_approval_granted: [{ tool: "issue_refund", args: { order_id: "ORD-1042", amount_usd: 340 } }],
  human_approval_rejected: [{ tool: "escalate_to_manager", args: { order_id: "ORD-1187", amount_usd: 480 } }],
  human_rejected_smaller: [{ tool: "issue_refund", args: { order_id: "ORD-1305", amount_usd: 100 } }],
  human_ask_user: [{ tool: "issue_refund", args: { order_id: "ORD-2077", amount_usd: 45 } }],
  human_approval_edited: [{ tool: "issue_refund", args: { order_id: "ORD-1220", amount_usd: 130 } }],
};

export const HUMAN: EvalScenario[] = [...PLAIN, ...PLAIN.map((s) => statefulVariant(s, ledgerShows(RAN[s.name]!)))];
