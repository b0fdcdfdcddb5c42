/**
 * Stateful plumbing scenarios, after forge's: a country lookup (with a second country on
 * file), a sales pipeline whose analysis works on whatever was loaded, and a record fetch
 * whose count must be zero-padded. Tools answer from their arguments and the run's state; a
 * lookup that misses answers "not found" as a normal result (the step counts as done and the
 * model goes on with no data, as against a real API), and validation checks the state the
 * tools left as well as the terminal answer.
 */
import { z } from "zod";
import { defineTool, Workflow } from "../../src/core/index.js";
import { scenario, type EvalScenario } from "../scenario.js";
import { planOracle, Seen, type PlanStep } from "./oracle-kit.js";
import { answered, fieldOf, mentionsAll, wrongPath } from "./stateful-og-kit.js";

// ── basic_2step_stateful: country facts ───────────────────────────────────

const COUNTRIES: Record<string, { name: string; capital: string; cityPopulation: string; population: string }> = {
  france: { name: "France", capital: "Paris", cityPopulation: "2.1 million", population: "67 million" },
  // The decoy: a second country on file, so a lookup of the wrong one returns real but wrong facts.
  japan: { name: "Japan", capital: "Tokyo", cityPopulation: "14 million", population: "125 million" },
};

interface CountryState {
  /** Keys of the countries a lookup found, in call order. */
  retrieved: string[];
}

function countryWorkflow(): { workflow: Workflow; state: CountryState } {
  const state: CountryState = { retrieved: [] };
  const info = defineTool({
    name: "get_country_info",
    description: "Facts on file about one country: its capital and population.",
    parameters: z.object({ country: z.string().describe("Name of the country") }),
    execute: ({ country }) => {
      const key = country.trim().toLowerCase();
      const c = COUNTRIES[key];
      if (!c) return `Nothing on file for "${country}".`;
      state.retrieved.push(key);
      return `Country: ${c.name}\nCapital: ${c.capital}\nCapital population: ${c.cityPopulation}\nNational population: ${c.population}`;
    },
  });
  const summarize = defineTool({
    name: "summarize",
    description: "Give the user the final answer, summarizing what was found.",
    parameters: z.object({ content: z.string().describe("The summary to give the user") }),
    execute: ({ content }) => content,
  });
  const workflow = new Workflow({
    name: "basic_2step_stateful",
    tools: { get_country_info: info, summarize },
    requiredSteps: ["get_country_info"],
    terminalTool: "summarize",
    systemPromptTemplate: "You answer questions about countries. Look the country up with get_country_info, then answer with summarize.",
  });
  return { workflow, state };
}

const countrySummary: PlanStep = {
  tool: "summarize",
  args: (s) => ({
    content: `The capital of ${fieldOf(s, "get_country_info", "Country")} is ${fieldOf(s, "get_country_info", "Capital")} (population ${fieldOf(s, "get_country_info", "Capital population")}).`,
  }),
};

export const basic2stepStateful: EvalScenario = scenario<CountryState>({
  name: "basic_2step_stateful",
  description: "One lookup that depends on its argument, then the answer; the lookup must really have found the country.",
  tags: ["stateful", "plumbing"],
  userInput: "What's the capital city of France?",
  idealIterations: 2,
  maxIterations: 15,
  budgetTokens: 8192,
  build: countryWorkflow,
  validate: ({ args, state }) => mentionsAll(args.content, ["paris", "capital"]) && state.retrieved.length > 0,
  oracle: planOracle([{ tool: "get_country_info", args: () => ({ country: "France" }) }, countrySummary]),
  slips: [
    {
      // Knows the answer, skips the lookup: the step nudge recovers it; without one, nothing was retrieved.
      name: "answers_before_lookup",
      rate: 0.02,
      when: (v) => !new Seen(v.results).tried("get_country_info") && !new Seen(v.results).tried("summarize"),
      step: () => ({ tool: "summarize", args: { content: "The capital of France is Paris." } }),
    },
    // Passes the question as the country: a miss, then the answer from memory (nothing retrieved).
    wrongPath("question_as_country", 0.01, [
      { tool: "get_country_info", args: () => ({ country: "capital of France" }) },
      { tool: "summarize", args: () => ({ content: "The capital of France is Paris." }) },
    ]),
    wrongPath("decoy_country", 0.01, [{ tool: "get_country_info", args: () => ({ country: "Japan" }) }, countrySummary]),
  ],
});

// ── sequential_3step_stateful: sales pipeline ─────────────────────────────

interface SalesDataset {
  records: number;
  columns: number;
  growthPct: number;
  topProduct: string;
  weakestRegion: string;
}

const DATASETS: Record<string, SalesDataset> = {
  "4/2024": { records: 150, columns: 12, growthPct: 23, topProduct: "Widget Pro", weakestRegion: "APAC" },
};

interface SalesState {
  /** The dataset the last successful fetch loaded (analysis runs on it). */
  loaded: SalesDataset | undefined;
  /** What the last analysis of a loaded dataset found. */
  analysis: string | undefined;
}

function salesWorkflow(): { workflow: Workflow; state: SalesState } {
  const state: SalesState = { loaded: undefined, analysis: undefined };
  const fetchData = defineTool({
    name: "fetch_sales_data",
    description: "Load the sales dataset of one quarter of one year, for analysis.",
    parameters: z.object({
      quarter: z.number().int().describe("Quarter, 1 to 4"),
      year: z.number().int().describe("Year, four digits"),
    }),
    execute: ({ quarter, year }) => {
      const d = DATASETS[`${quarter}/${year}`];
      if (!d) return `No sales dataset for Q${quarter} ${year}.`;
      state.loaded = d;
      return `Loaded Q${quarter} ${year}: ${d.records} records, ${d.columns} columns.`;
    },
  });
  const analyze = defineTool({
    name: "analyze_sales",
    description: "Analyze the sales dataset loaded last and report its findings.",
    parameters: z.object({}),
    execute: () => {
      const d = state.loaded;
      if (!d) return "Nothing to analyze: no dataset is loaded yet (use fetch_sales_data).";
      state.analysis = `Revenue growth: ${d.growthPct}% year over year\nTop product: ${d.topProduct}\nWeakest region: ${d.weakestRegion}`;
      return state.analysis;
    },
  });
  const report = defineTool({
    name: "report",
    description: "Write the final report from the analysis findings.",
    parameters: z.object({ findings: z.string().describe("The findings the report presents") }),
    execute: ({ findings }) => findings,
  });
  const workflow = new Workflow({
    name: "sequential_3step_stateful",
    tools: { fetch_sales_data: fetchData, analyze_sales: analyze, report },
    requiredSteps: ["fetch_sales_data", "analyze_sales"],
    terminalTool: "report",
    systemPromptTemplate: "You are a sales analyst. Load the dataset, analyze it, and only then write the report with the report tool.",
  });
  return { workflow, state };
}

const salesReport: PlanStep = {
  tool: "report",
  args: (s) => ({
    findings:
      `Revenue growth: ${fieldOf(s, "analyze_sales", "Revenue growth")}. Top product: ${fieldOf(s, "analyze_sales", "Top product")}. ` +
      `Weakest region: ${fieldOf(s, "analyze_sales", "Weakest region")}.`,
  }),
};

export const sequential3stepStateful: EvalScenario = scenario<SalesState>({
  name: "sequential_3step_stateful",
  description: "Fetch, analyze, report: the analysis works on the dataset the fetch really loaded.",
  tags: ["stateful", "plumbing"],
  userInput: "Build me a sales report from the Q4 2024 data.",
  idealIterations: 3,
  maxIterations: 15,
  budgetTokens: 8192,
  build: salesWorkflow,
  validate: ({ args, state }) => mentionsAll(args.findings, ["23", "widget pro", "apac"]) && state.loaded !== undefined && state.analysis !== undefined,
  oracle: planOracle([
    { tool: "fetch_sales_data", args: () => ({ quarter: 4, year: 2024 }) },
    { tool: "analyze_sales", args: () => ({}) },
    salesReport,
  ]),
  slips: [
    {
      // Reports from the fetch summary: the step nudge sends it to the analysis; without one, no findings.
      name: "reports_before_analysis",
      rate: 0.02,
      when: (v) => answered(v, "fetch_sales_data") && !new Seen(v.results).tried("analyze_sales") && !new Seen(v.results).tried("report"),
      step: () => ({ tool: "report", args: { findings: "Q4 2024 sales: 150 records across 12 columns." } }),
    },
    // "Q4 2024" read as year 24: no dataset, an analysis of nothing, a report of nothing.
    wrongPath("two_digit_year", 0.01, [
      { tool: "fetch_sales_data", args: () => ({ quarter: 4, year: 24 }) },
      { tool: "analyze_sales", args: () => ({}) },
      { tool: "report", args: () => ({ findings: "No sales data was available for Q4 24." }) },
    ]),
  ],
});

// ── error_recovery_stateful: a count that must be zero-padded ─────────────

interface FetchState {
  /** Records the last successful fetch returned. */
  fetchedCount: number | undefined;
}

function fetchWorkflow(): { workflow: Workflow; state: FetchState } {
  const state: FetchState = { fetchedCount: undefined };
  const fetchRecords = defineTool({
    name: "fetch",
    // The zero-padding is on purpose not documented: the model learns it from the error.
    description: "Fetch a number of records. `count` is passed as a numeric string.",
    parameters: z.object({ count: z.string().describe("How many records to fetch, as a numeric string") }),
    execute: ({ count }) => {
      if (!/^\d{4}$/.test(count)) throw new TypeError(`count must be four digits, zero-padded (e.g. "0025"); got "${count}"`);
      state.fetchedCount = Number(count);
      return `Fetched: ${state.fetchedCount} records`;
    },
  });
  const summarize = defineTool({
    name: "summarize",
    description: "Summarize the records that were fetched, as the final answer.",
    parameters: z.object({ content: z.string().describe("The summary to give the user") }),
    execute: ({ content }) => content,
  });
  const workflow = new Workflow({
    name: "error_recovery_stateful",
    tools: { fetch: fetchRecords, summarize },
    requiredSteps: ["fetch"],
    terminalTool: "summarize",
    systemPromptTemplate: "You fetch records and summarize them. Fetch what the user asks for, then summarize it.",
  });
  return { workflow, state };
}

const fetchSummary: PlanStep = { tool: "summarize", args: (s) => ({ content: `Fetched ${fieldOf(s, "fetch", "Fetched")} as requested.` }) };

export const errorRecoveryStateful: EvalScenario = scenario<FetchState>({
  name: "error_recovery_stateful",
  description: "The first fetch trips on an undocumented count format; the retry must fetch exactly the count asked for.",
  tags: ["stateful", "plumbing"],
  userInput: "Fetch 10 records, then summarize them.",
  // Trip, retry, summarize: the format is only learnt from the error, so the clean model trips too.
  idealIterations: 3,
  maxIterations: 15,
  budgetTokens: 8192,
  build: fetchWorkflow,
  validate: ({ args, state }) => mentionsAll(args.content, ["10", "record"]) && state.fetchedCount === 10,
  oracle: planOracle([{ tool: "fetch", firstTry: { count: "10" }, args: () => ({ count: "0010" }) }, fetchSummary]),
  slips: [
    {
      // Gives up after the error and summarizes: the step nudge sends it back to retry.
      name: "gives_up_after_error",
      rate: 0.05,
      when: (v) => new Seen(v.results).tried("fetch") && !answered(v, "fetch") && !new Seen(v.results).tried("summarize"),
      step: () => ({ tool: "summarize", args: { content: "The fetch failed, so there are no records to summarize." } }),
    },
    // Pads on the wrong side: 1000 records fetched. "Fetched 1000 records" still mentions "10"; the state does not.
    wrongPath("pads_wrong_side", 0.01, [{ tool: "fetch", firstTry: { count: "10" }, args: () => ({ count: "1000" }) }, fetchSummary]),
  ],
});

export const STATEFUL_OG_PLUMBING: EvalScenario[] = [basic2stepStateful, sequential3stepStateful, errorRecoveryStateful];
