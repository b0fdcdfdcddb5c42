/**
 * The argument-checking variants of the nine plain scenarios (`<name>_checked`, tag `checked`):
 * our own domains, where the tools answer from fixed tables, reject what they do not know, and
 * validation checks the terminal call's typed arguments end to end (the right id, the converted
 * amount, the route taken). Forge has no counterpart: its plain scenarios, ours under forge's
 * names in plumbing.ts, model-quality.ts and reasoning.ts, read the answer text instead.
 */
import { z } from "zod";
import { defineTool, Workflow, type AnyToolDef } from "../../src/core/index.js";
import { scenario, type EvalScenario } from "../scenario.js";
import { planOracle } from "./oracle-kit.js";

const WEATHER: Record<string, { temp_c: number; condition: string }> = {
  Paris: { temp_c: 18, condition: "cloudy" },
  Oslo: { temp_c: 4, condition: "snow" },
  Lima: { temp_c: 24, condition: "sunny" },
};

function basicWorkflow(): Workflow {
  const getWeather = defineTool({
    name: "get_weather",
    description: "Current weather for a city.",
    parameters: z.object({ city: z.string().describe("City name, e.g. Paris") }),
    execute: ({ city }) => {
      const w = WEATHER[city];
      if (!w) throw new Error(`unknown city "${city}"; known: ${Object.keys(WEATHER).join(", ")}`);
      return `city=${city} temp_c=${w.temp_c} condition=${w.condition}`;
    },
  });
  const report = defineTool({
    name: "report_weather",
    description: "Give the final weather report to the user.",
    parameters: z.object({ city: z.string(), temp_c: z.number(), condition: z.string() }),
    execute: (a) => `reported ${a.city}`,
  });
  return new Workflow({
    name: "basic_2step_checked",
    tools: { get_weather: getWeather, report_weather: report },
    requiredSteps: ["get_weather"],
    terminalTool: "report_weather",
    systemPromptTemplate: "You are a weather assistant. Look the weather up with a tool, then report it with report_weather.",
  });
}

export const basic2stepChecked: EvalScenario = scenario({
  name: "basic_2step_checked",
  description: "Basic function calling: one lookup, then the terminal report.",
  tags: ["plumbing", "checked"],
  userInput: "What's the weather in Paris right now?",
  idealIterations: 2,
  maxIterations: 8,
  budgetTokens: 8192,
  build: () => ({ workflow: basicWorkflow(), state: undefined }),
  validate: ({ tool, args }) => tool === "report_weather" && args.city === "Paris" && args.temp_c === 18 && args.condition === "cloudy",
  oracle: planOracle([
    { tool: "get_weather", args: () => ({ city: "Paris" }) },
    {
      tool: "report_weather",
      args: (s) => ({ city: "Paris", temp_c: Number(s.get("get_weather", "temp_c", "18")), condition: s.get("get_weather", "condition", "cloudy") }),
    },
  ]),
});

function sequentialWorkflow(): Workflow {
  const fetchData = defineTool({
    name: "fetch_sales",
    description: "Fetch the raw sales rows for a quarter.",
    parameters: z.object({ quarter: z.string().describe("e.g. Q3") }),
    execute: ({ quarter }) => {
      if (quarter !== "Q3") throw new Error(`no data for quarter "${quarter}"; available: Q3`);
      return "quarter=Q3 rows=120 dataset=ds-q3-sales";
    },
  });
  const analyze = defineTool({
    name: "analyze_sales",
    description: "Analyze a fetched dataset; returns the growth figure.",
    parameters: z.object({ dataset: z.string() }),
    prerequisites: ["fetch_sales"],
    execute: ({ dataset }) => {
      if (dataset !== "ds-q3-sales") throw new Error(`unknown dataset "${dataset}"`);
      return "dataset=ds-q3-sales trend=up growth_pct=12";
    },
  });
  const write = defineTool({
    name: "write_report",
    description: "Write the final sales report.",
    parameters: z.object({ quarter: z.string(), growth_pct: z.number(), trend: z.string() }),
    execute: (a) => `report written for ${a.quarter}`,
  });
  return new Workflow({
    name: "sequential_3step_checked",
    tools: { fetch_sales: fetchData, analyze_sales: analyze, write_report: write },
    requiredSteps: ["fetch_sales", "analyze_sales"],
    terminalTool: "write_report",
    systemPromptTemplate: "You produce sales reports. Always fetch the data, analyze it, then write the report.",
  });
}

export const sequential3stepChecked: EvalScenario = scenario({
  name: "sequential_3step_checked",
  description: "Required-step enforcement: fetch, analyze, then report.",
  tags: ["plumbing", "checked"],
  userInput: "Write the Q3 sales report.",
  idealIterations: 3,
  maxIterations: 10,
  budgetTokens: 8192,
  build: () => ({ workflow: sequentialWorkflow(), state: undefined }),
  validate: ({ args }) => args.quarter === "Q3" && args.growth_pct === 12 && args.trend === "up",
  oracle: planOracle([
    { tool: "fetch_sales", args: () => ({ quarter: "Q3" }) },
    { tool: "analyze_sales", args: (s) => ({ dataset: s.get("fetch_sales", "dataset", "ds-q3-sales") }) },
    {
      tool: "write_report",
      args: (s) => ({ quarter: "Q3", growth_pct: Number(s.get("analyze_sales", "growth_pct", "12")), trend: s.get("analyze_sales", "trend", "up") }),
    },
  ]),
});

const ACCOUNT_ID = /^ACC-\d{4}$/;

function errorRecoveryWorkflow(): Workflow {
  const lookup = defineTool({
    name: "get_account",
    description: "Look up an account by its id (format ACC-NNNN).",
    parameters: z.object({ account_id: z.string() }),
    execute: ({ account_id }) => {
      // A plain exception (not a resolution error): the model must read it and fix the call.
      if (!ACCOUNT_ID.test(account_id)) throw new TypeError(`account_id must match ACC-NNNN (four digits), got "${account_id}"`);
      if (account_id !== "ACC-0042") throw new Error(`no account ${account_id}`);
      return "account_id=ACC-0042 owner=Dana balance_usd=1250";
    },
  });
  const answer = defineTool({
    name: "report_balance",
    description: "Report the account balance to the user.",
    parameters: z.object({ account_id: z.string(), balance_usd: z.number() }),
    execute: (a) => `balance of ${a.account_id} reported`,
  });
  return new Workflow({
    name: "error_recovery_checked",
    tools: { get_account: lookup, report_balance: answer },
    requiredSteps: ["get_account"],
    terminalTool: "report_balance",
    systemPromptTemplate: "You answer account questions. Look the account up, then report its balance.",
  });
}

export const errorRecoveryChecked: EvalScenario = scenario({
  name: "error_recovery_checked",
  description: "Tool-error self-correction: the first lookup uses a bad id format and must be fixed.",
  tags: ["plumbing", "checked"],
  userInput: "What's the balance of account 42? (Our ids are zero-padded, like ACC-0042.)",
  idealIterations: 3,
  maxIterations: 8,
  budgetTokens: 8192,
  build: () => ({ workflow: errorRecoveryWorkflow(), state: undefined }),
  validate: ({ args }) => args.account_id === "ACC-0042" && args.balance_usd === 1250,
  oracle: planOracle([
    { tool: "get_account", firstTry: { account_id: "42" }, args: () => ({ account_id: "ACC-0042" }) },
    { tool: "report_balance", args: (s) => ({ account_id: "ACC-0042", balance_usd: Number(s.get("get_account", "balance_usd", "1250")) }) },
  ]),
});

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
    name: "tool_selection_checked",
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

export const toolSelectionChecked: EvalScenario = scenario({
  name: "tool_selection_checked",
  description: "Routing among 8 tools (5 distractors): price lookup, conversion, answer.",
  tags: ["model_quality", "checked"],
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
    name: "argument_fidelity_checked",
    tools: { search_companies: search, get_financials: details, report_financials: report },
    requiredSteps: ["search_companies", "get_financials"],
    terminalTool: "report_financials",
    systemPromptTemplate: "You are a company-research assistant. Copy ids and figures exactly from tool results.",
  });
}

export const argumentFidelityChecked: EvalScenario = scenario({
  name: "argument_fidelity_checked",
  description: "Extracting arguments from tool results (entity_id=42) into later calls.",
  tags: ["model_quality", "checked"],
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
    name: "sequential_reasoning_checked",
    tools: { get_user: user, get_latest_order: orders, get_shipment: shipment, answer },
    requiredSteps: ["get_user", "get_latest_order", "get_shipment"],
    terminalTool: "answer",
    systemPromptTemplate: "You are a support agent. Each lookup needs an id from the previous one.",
  });
}

export const sequentialReasoningChecked: EvalScenario = scenario({
  name: "sequential_reasoning_checked",
  description: "4-step chain where each call needs an id from the previous result.",
  tags: ["model_quality", "checked"],
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
    name: "relevance_detection_checked",
    tools: { get_inventory: stock, update_price: price, answer, decline },
    terminalTool: ["answer", "decline"],
    systemPromptTemplate: "You manage warehouse inventory and prices. Decline anything else with the decline tool.",
  });
}

export const relevanceDetectionChecked: EvalScenario = scenario({
  name: "relevance_detection_checked",
  description: "Hallucination resistance: an unrelated question must be declined, not answered with tools.",
  tags: ["model_quality", "checked"],
  userInput: "Who won the 1998 football World Cup?",
  idealIterations: 1,
  maxIterations: 5,
  budgetTokens: 8192,
  build: () => ({ workflow: relevanceWorkflow(), state: undefined }),
  validate: ({ tool, args }) => tool === "decline" && typeof args.reason === "string" && args.reason.length > 0,
  oracle: planOracle([{ tool: "decline", args: () => ({ reason: "The question is not about inventory or pricing." }) }]),
});

function conditionalRoutingWorkflow(): Workflow {
  const alert = defineTool({
    name: "get_alert",
    description: "Details of an open alert.",
    parameters: z.object({ alert_id: z.string() }),
    execute: ({ alert_id }) => {
      if (alert_id !== "AL-301") throw new Error(`no alert ${alert_id}`);
      return "alert_id=AL-301 service=payments severity=high started=10:07 symptom=5xx_spike";
    },
  });
  const deploys = defineTool({
    name: "check_recent_deploys",
    description: "Deploys of a service in the last hour.",
    parameters: z.object({ service: z.string() }),
    execute: ({ service }) => {
      if (service !== "payments") return `service=${service} deploys=0`;
      return "service=payments deploys=1 deploy_id=D-88 deployed=10:02 correlated_with_alert=true";
    },
  });
  const metrics = defineTool({
    name: "check_metrics",
    description: "CPU and memory for a service.",
    parameters: z.object({ service: z.string() }),
    execute: ({ service }) => `service=${service} cpu_pct=41 mem_pct=58 anomaly=none`,
  });
  const page = defineTool({
    name: "page_oncall",
    description: "Page the on-call engineer (for high-severity alerts only).",
    parameters: z.object({ service: z.string(), note: z.string() }),
    execute: ({ service }) => `paged=true service=${service} engineer=R.Okafor`,
  });
  const ticket = defineTool({
    name: "create_ticket",
    description: "Open a ticket (for low-severity alerts).",
    parameters: z.object({ service: z.string(), note: z.string() }),
    execute: ({ service }) => `ticket=T-4410 service=${service}`,
  });
  const resolve = defineTool({
    name: "resolve_incident",
    description: "Close the triage with the escalation taken and the suspected cause.",
    parameters: z.object({
      alert_id: z.string(),
      escalation: z.enum(["paged", "ticket"]),
      suspected_deploy: z.string().describe("deploy id, or 'none'"),
    }),
    execute: () => "triage closed",
  });
  return new Workflow({
    name: "conditional_routing_checked",
    tools: { get_alert: alert, check_recent_deploys: deploys, check_metrics: metrics, page_oncall: page, create_ticket: ticket, resolve_incident: resolve },
    requiredSteps: ["get_alert"],
    terminalTool: "resolve_incident",
    systemPromptTemplate:
      "You triage incidents. High severity: page on-call. Low severity: open a ticket. " +
      "Correlate the alert with recent deploys before closing.",
  });
}

export const conditionalRoutingChecked: EvalScenario = scenario({
  name: "conditional_routing_checked",
  description: "Incident triage: severity decides the route; the deploy must be correlated.",
  tags: ["model_quality", "reasoning", "checked"],
  userInput: "Triage alert AL-301.",
  idealIterations: 4,
  maxIterations: 12,
  budgetTokens: 8192,
  build: () => ({ workflow: conditionalRoutingWorkflow(), state: undefined }),
  validate: ({ args }) => args.alert_id === "AL-301" && args.escalation === "paged" && args.suspected_deploy === "D-88",
  oracle: planOracle([
    { tool: "get_alert", args: () => ({ alert_id: "AL-301" }) },
    { tool: "check_recent_deploys", args: (s) => ({ service: s.get("get_alert", "service", "payments") }) },
    { tool: "page_oncall", args: (s) => ({ service: s.get("get_alert", "service", "payments"), note: "5xx spike after deploy" }) },
    { tool: "resolve_incident", args: (s) => ({ alert_id: "AL-301", escalation: "paged", suspected_deploy: s.get("check_recent_deploys", "deploy_id", "D-88") }) },
  ]),
});

function dataGapWorkflow(): Workflow {
  const catalog = defineTool({
    name: "search_catalog",
    description: "Search the current product catalog by name.",
    parameters: z.object({ query: z.string() }),
    // A dead end, not an error: the model must read the hint and change course.
    execute: ({ query }) => `results=0 query=${query.replaceAll(" ", "_")} hint=discontinued_products_are_in_search_archive`,
  });
  const archive = defineTool({
    name: "search_archive",
    description: "Search discontinued products by name.",
    parameters: z.object({ query: z.string() }),
    execute: ({ query }) => {
      if (!/blue\s*widget/i.test(query)) return "results=0";
      return "results=1 sku=W-114 status=discontinued replaced_by=W-214";
    },
  });
  const product = defineTool({
    name: "get_product",
    description: "Product record for a SKU, including where it is stocked.",
    parameters: z.object({ sku: z.string() }),
    execute: ({ sku }) => {
      if (sku === "W-114") return "sku=W-114 status=discontinued warehouse=none replaced_by=W-214";
      if (sku !== "W-214") throw new Error(`no product ${sku}`);
      return "sku=W-214 name=Blue_Widget_v2 warehouse=RNO";
    },
  });
  const stock = defineTool({
    name: "check_stock_level",
    description: "Units on hand of a SKU in a warehouse code.",
    parameters: z.object({ sku: z.string(), warehouse: z.string() }),
    execute: ({ sku, warehouse }) => {
      if (sku !== "W-214" || warehouse !== "RNO") throw new Error(`no stock record for ${sku} in ${warehouse}`);
      return "sku=W-214 warehouse=RNO on_hand=37";
    },
  });
  const report = defineTool({
    name: "report_stock",
    description: "Report the stock level to the user.",
    parameters: z.object({ sku: z.string(), warehouse: z.string(), on_hand: z.number() }),
    execute: () => "reported",
  });
  return new Workflow({
    name: "data_gap_recovery_checked",
    tools: { search_catalog: catalog, search_archive: archive, get_product: product, check_stock_level: stock, report_stock: report },
    requiredSteps: ["check_stock_level"],
    terminalTool: "report_stock",
    systemPromptTemplate: "You answer stock questions. Products may have been discontinued and replaced.",
  });
}

export const dataGapRecoveryChecked: EvalScenario = scenario({
  name: "data_gap_recovery_checked",
  description: "Dead-end recovery: empty catalog search, archive lookup, replacement SKU, stock.",
  tags: ["model_quality", "reasoning", "checked"],
  userInput: "How many blue widgets do we have in stock?",
  idealIterations: 5,
  maxIterations: 14,
  budgetTokens: 8192,
  build: () => ({ workflow: dataGapWorkflow(), state: undefined }),
  validate: ({ args }) => args.sku === "W-214" && args.warehouse === "RNO" && args.on_hand === 37,
  oracle: planOracle([
    { tool: "search_catalog", args: () => ({ query: "blue widget" }) },
    { tool: "search_archive", args: () => ({ query: "blue widget" }) },
    { tool: "get_product", args: (s) => ({ sku: s.get("search_archive", "replaced_by", "W-214") }) },
    { tool: "check_stock_level", args: (s) => ({ sku: s.get("get_product", "sku", "W-214"), warehouse: s.get("get_product", "warehouse", "RNO") }) },
    {
      tool: "report_stock",
      args: (s) => ({ sku: "W-214", warehouse: s.get("check_stock_level", "warehouse", "RNO"), on_hand: Number(s.get("check_stock_level", "on_hand", "37")) }),
    },
  ]),
});

/** In suite order: plumbing, then model quality, then reasoning. */
export const CHECKED: EvalScenario[] = [
  basic2stepChecked,
  sequential3stepChecked,
  errorRecoveryChecked,
  toolSelectionChecked,
  argumentFidelityChecked,
  sequentialReasoningChecked,
  relevanceDetectionChecked,
  conditionalRoutingChecked,
  dataGapRecoveryChecked,
];
