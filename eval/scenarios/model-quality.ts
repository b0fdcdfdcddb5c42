/**
 * Model-quality scenarios: routing among distractor tools, carrying ids out of results into
 * later arguments, a 4-step dependent chain, and refusing a query the tools cannot answer.
 */
import { z } from "zod";
import { defineTool, Workflow, type AnyToolDef } from "../../src/core/index.js";
import { scenario, type EvalScenario } from "../scenario.js";
import { planOracle } from "./oracle-kit.js";

/** A tool that must not be needed; calling it is a wasted (but harmless) call. */
function distractor(name: string, description: string): AnyToolDef {
  return defineTool({
    name,
    description,
    parameters: z.object({ query: z.string() }),
    execute: ({ query }) => `nothing relevant for "${query}"`,
  });
}

function toolSelectionWorkflow(): Workflow {
  const price = defineTool({
    name: "get_stock_price",
    description: "Latest stock price in USD for a ticker symbol.",
    parameters: z.object({ ticker: z.string() }),
    execute: ({ ticker }) => {
      if (ticker !== "ACME") throw new Error(`unknown ticker "${ticker}"`);
      return "ticker=ACME price_usd=250";
    },
  });
  const convert = defineTool({
    name: "convert_currency",
    description: "Convert an amount between currencies.",
    parameters: z.object({ amount: z.number(), from: z.string(), to: z.string() }),
    execute: ({ amount, from, to }) => {
      if (from !== "USD" || to !== "EUR") throw new Error(`only USD->EUR is supported, got ${from}->${to}`);
      return `amount_eur=${Math.round(amount * 0.9 * 100) / 100}`;
    },
  });
  const answer = defineTool({
    name: "answer",
    description: "Give the final answer to the user.",
    parameters: z.object({ ticker: z.string(), price_eur: z.number() }),
    execute: (a) => `answered ${a.ticker}`,
  });
  return new Workflow({
    name: "tool_selection",
    tools: {
      get_weather: distractor("get_weather", "Current weather for a city."),
      search_web: distractor("search_web", "Search the web."),
      send_email: distractor("send_email", "Send an email."),
      get_news: distractor("get_news", "Latest news headlines for a topic."),
      calculate_tax: distractor("calculate_tax", "Estimate income tax."),
      get_stock_price: price,
      convert_currency: convert,
      answer,
    },
    requiredSteps: ["get_stock_price", "convert_currency"],
    terminalTool: "answer",
    systemPromptTemplate: "You are a finance assistant with several tools. Use only the ones the question needs.",
  });
}

export const toolSelection: EvalScenario = scenario({
  name: "tool_selection",
  description: "Routing among 8 tools (5 distractors): price lookup, conversion, answer.",
  tags: ["model_quality"],
  userInput: "How much is one ACME share in euros?",
  idealIterations: 3,
  maxIterations: 10,
  budgetTokens: 8192,
  build: () => ({ workflow: toolSelectionWorkflow(), state: undefined }),
  validate: ({ args }) => args.ticker === "ACME" && args.price_eur === 225,
  oracle: planOracle([
    { tool: "get_stock_price", args: () => ({ ticker: "ACME" }) },
    { tool: "convert_currency", args: (s) => ({ amount: Number(s.get("get_stock_price", "price_usd", "250")), from: "USD", to: "EUR" }) },
    { tool: "answer", args: (s) => ({ ticker: "ACME", price_eur: Number(s.get("convert_currency", "amount_eur", "225")) }) },
  ]),
});

function argumentFidelityWorkflow(): Workflow {
  const search = defineTool({
    name: "search_companies",
    description: "Search companies by name; returns their entity ids.",
    parameters: z.object({ name: z.string() }),
    execute: ({ name }) => {
      if (!/orion/i.test(name)) throw new Error(`no company matches "${name}"`);
      return "entity_id=42 name=Orion_Labs hq=Denver";
    },
  });
  const details = defineTool({
    name: "get_financials",
    description: "Financials for an entity id (a number from search_companies).",
    parameters: z.object({ entity_id: z.number().int() }),
    execute: ({ entity_id }) => {
      if (entity_id !== 42) throw new Error(`no financials for entity ${entity_id}`);
      return "entity_id=42 revenue_musd=318 fiscal_year=2024";
    },
  });
  const report = defineTool({
    name: "report_financials",
    description: "Report the company's revenue.",
    parameters: z.object({ entity_id: z.number().int(), revenue_musd: z.number(), fiscal_year: z.number().int() }),
    execute: () => "reported",
  });
  return new Workflow({
    name: "argument_fidelity",
    tools: { search_companies: search, get_financials: details, report_financials: report },
    requiredSteps: ["search_companies", "get_financials"],
    terminalTool: "report_financials",
    systemPromptTemplate: "You are a company-research assistant. Copy ids and figures exactly from tool results.",
  });
}

export const argumentFidelity: EvalScenario = scenario({
  name: "argument_fidelity",
  description: "Extracting arguments from tool results (entity_id=42) into later calls.",
  tags: ["model_quality"],
  userInput: "What was Orion Labs' revenue last fiscal year?",
  idealIterations: 3,
  maxIterations: 10,
  budgetTokens: 8192,
  build: () => ({ workflow: argumentFidelityWorkflow(), state: undefined }),
  validate: ({ args }) => args.entity_id === 42 && args.revenue_musd === 318 && args.fiscal_year === 2024,
  oracle: planOracle([
    { tool: "search_companies", args: () => ({ name: "Orion Labs" }) },
    { tool: "get_financials", args: (s) => ({ entity_id: Number(s.get("search_companies", "entity_id", "42")) }) },
    {
      tool: "report_financials",
      args: (s) => ({
        entity_id: Number(s.get("get_financials", "entity_id", "42")),
        revenue_musd: Number(s.get("get_financials", "revenue_musd", "318")),
        fiscal_year: Number(s.get("get_financials", "fiscal_year", "2024")),
      }),
    },
  ]),
});

function sequentialReasoningWorkflow(): Workflow {
  const user = defineTool({
    name: "get_user",
    description: "Find a customer by username.",
    parameters: z.object({ username: z.string() }),
    execute: ({ username }) => {
      if (username !== "mkoval") throw new Error(`no user "${username}"`);
      return "user_id=U-1717 username=mkoval";
    },
  });
  const orders = defineTool({
    name: "get_latest_order",
    description: "The latest order of a user id.",
    parameters: z.object({ user_id: z.string() }),
    execute: ({ user_id }) => {
      if (user_id !== "U-1717") throw new Error(`no orders for ${user_id}`);
      return "order_id=O-5521 placed=2025-03-02";
    },
  });
  const shipment = defineTool({
    name: "get_shipment",
    description: "Shipment status of an order id.",
    parameters: z.object({ order_id: z.string() }),
    execute: ({ order_id }) => {
      if (order_id !== "O-5521") throw new Error(`no shipment for ${order_id}`);
      return "tracking=TRK-9007 status=delayed eta_days=3";
    },
  });
  const answer = defineTool({
    name: "answer",
    description: "Answer the customer.",
    parameters: z.object({ tracking: z.string(), status: z.string(), eta_days: z.number() }),
    execute: () => "answered",
  });
  return new Workflow({
    name: "sequential_reasoning",
    tools: { get_user: user, get_latest_order: orders, get_shipment: shipment, answer },
    requiredSteps: ["get_user", "get_latest_order", "get_shipment"],
    terminalTool: "answer",
    systemPromptTemplate: "You are a support agent. Each lookup needs an id from the previous one.",
  });
}

export const sequentialReasoning: EvalScenario = scenario({
  name: "sequential_reasoning",
  description: "4-step chain where each call needs an id from the previous result.",
  tags: ["model_quality"],
  userInput: "Where is the latest order of user mkoval?",
  idealIterations: 4,
  maxIterations: 12,
  budgetTokens: 8192,
  build: () => ({ workflow: sequentialReasoningWorkflow(), state: undefined }),
  validate: ({ args }) => args.tracking === "TRK-9007" && args.status === "delayed" && args.eta_days === 3,
  oracle: planOracle([
    { tool: "get_user", args: () => ({ username: "mkoval" }) },
    { tool: "get_latest_order", args: (s) => ({ user_id: s.get("get_user", "user_id", "U-1717") }) },
    { tool: "get_shipment", args: (s) => ({ order_id: s.get("get_latest_order", "order_id", "O-5521") }) },
    {
      tool: "answer",
      args: (s) => ({
        tracking: s.get("get_shipment", "tracking", "TRK-9007"),
        status: s.get("get_shipment", "status", "delayed"),
        eta_days: Number(s.get("get_shipment", "eta_days", "3")),
      }),
    },
  ]),
});

function relevanceWorkflow(): Workflow {
  const stock = defineTool({
    name: "get_inventory",
    description: "Units on hand for a SKU in our warehouse.",
    parameters: z.object({ sku: z.string() }),
    execute: ({ sku }) => `sku=${sku} on_hand=12`,
  });
  const price = defineTool({
    name: "update_price",
    description: "Change the list price of a SKU.",
    parameters: z.object({ sku: z.string(), price_usd: z.number() }),
    execute: ({ sku }) => `price of ${sku} updated`,
  });
  const answer = defineTool({
    name: "answer",
    description: "Answer an inventory or pricing question.",
    parameters: z.object({ text: z.string() }),
    execute: () => "answered",
  });
  const decline = defineTool({
    name: "decline",
    description: "Decline a request that is unrelated to inventory or pricing.",
    parameters: z.object({ reason: z.string() }),
    execute: () => "declined",
  });
  return new Workflow({
    name: "relevance_detection",
    tools: { get_inventory: stock, update_price: price, answer, decline },
    terminalTool: ["answer", "decline"],
    systemPromptTemplate: "You manage warehouse inventory and prices. Decline anything else with the decline tool.",
  });
}

export const relevanceDetection: EvalScenario = scenario({
  name: "relevance_detection",
  description: "Hallucination resistance: an unrelated question must be declined, not answered with tools.",
  tags: ["model_quality"],
  userInput: "Who won the 1998 football World Cup?",
  idealIterations: 1,
  maxIterations: 5,
  budgetTokens: 8192,
  build: () => ({ workflow: relevanceWorkflow(), state: undefined }),
  validate: ({ tool, args }) => tool === "decline" && typeof args.reason === "string" && args.reason.length > 0,
  oracle: planOracle([{ tool: "decline", args: () => ({ reason: "The question is not about inventory or pricing." }) }]),
});

export const MODEL_QUALITY: EvalScenario[] = [toolSelection, argumentFidelity, sequentialReasoning, relevanceDetection];
