/**
 * Plumbing scenarios: does the model call tools at all, follow required steps, and fix its
 * arguments after a tool error? Tools answer from fixed tables; only the model varies.
 */
import { z } from "zod";
import { defineTool, Workflow } from "../../src/core/index.js";
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
    name: "basic_2step",
    tools: { get_weather: getWeather, report_weather: report },
    requiredSteps: ["get_weather"],
    terminalTool: "report_weather",
    systemPromptTemplate: "You are a weather assistant. Look the weather up with a tool, then report it with report_weather.",
  });
}

export const basic2step: EvalScenario = scenario({
  name: "basic_2step",
  description: "Basic function calling: one lookup, then the terminal report.",
  tags: ["plumbing"],
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
    name: "sequential_3step",
    tools: { fetch_sales: fetchData, analyze_sales: analyze, write_report: write },
    requiredSteps: ["fetch_sales", "analyze_sales"],
    terminalTool: "write_report",
    systemPromptTemplate: "You produce sales reports. Always fetch the data, analyze it, then write the report.",
  });
}

export const sequential3step: EvalScenario = scenario({
  name: "sequential_3step",
  description: "Required-step enforcement: fetch, analyze, then report.",
  tags: ["plumbing"],
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
    name: "error_recovery",
    tools: { get_account: lookup, report_balance: answer },
    requiredSteps: ["get_account"],
    terminalTool: "report_balance",
    systemPromptTemplate: "You answer account questions. Look the account up, then report its balance.",
  });
}

export const errorRecovery: EvalScenario = scenario({
  name: "error_recovery",
  description: "Tool-error self-correction: the first lookup uses a bad id format and must be fixed.",
  tags: ["plumbing"],
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

export const PLUMBING: EvalScenario[] = [basic2step, sequential3step, errorRecovery];
