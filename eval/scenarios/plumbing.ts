/**
 * Plumbing scenarios as forge's leaderboard runs them: does the model call tools at all, take
 * the required steps in order, and fix an argument a tool rejected? The tools are fixed-answer
 * functions and validation reads the terminal call's text for the facts the tools returned
 * (forge's "lambda" scenarios). The argument-checking variants of the same skills are in
 * checked.ts.
 */
import { z } from "zod";
import { defineTool, Workflow } from "../../src/core/index.js";
import { scenario, type EvalScenario, type OracleView } from "../scenario.js";
import { mentionsAll } from "./answer-text.js";
import { planOracle, Seen, unansweredTurns } from "./oracle-kit.js";

/** Facts read so far, for slips that decide from the same view as the oracle. */
const seen = (view: OracleView) => new Seen(view.results);

function basicWorkflow(): Workflow {
  const info = defineTool({
    name: "get_country_info",
    description: "Facts about a country: its capital and how many people live there.",
    parameters: z.object({ country: z.string().describe("The country, e.g. Spain") }),
    execute: () => "Country: France. Capital: Paris. Population of the capital: 2.1 million.",
  });
  const summarize = defineTool({
    name: "summarize",
    description: "Give the user the final answer as a short summary.",
    parameters: z.object({ content: z.string().describe("The summary the user reads") }),
    execute: ({ content }) => content,
  });
  return new Workflow({
    name: "basic_2step",
    tools: { get_country_info: info, summarize },
    requiredSteps: ["get_country_info"],
    terminalTool: "summarize",
    systemPromptTemplate: "You answer questions with tools. Look the facts up with get_country_info, then answer with summarize.",
  });
}

export const basic2step: EvalScenario = scenario({
  name: "basic_2step",
  description: "Does the model call tools at all: one lookup, then a summary that names the capital.",
  tags: ["plumbing"],
  userInput: "What is the capital of France?",
  idealIterations: 2,
  maxIterations: 15,
  budgetTokens: 8192,
  build: () => ({ workflow: basicWorkflow(), state: undefined }),
  validate: ({ args }) => mentionsAll(args.content, ["paris", "capital"]),
  oracle: planOracle([
    { tool: "get_country_info", args: () => ({ country: "France" }) },
    { tool: "summarize", args: (s) => ({ content: s.text("get_country_info") }) },
  ]),
  slips: [
    {
      // Writes the answer as chat instead of calling summarize: a nudge brings it back.
      name: "answers_in_prose",
      rate: 0.01,
      when: (v) => seen(v).succeeded("get_country_info") && unansweredTurns(v) === 0,
      step: () => ({ text: "France's capital is Paris." }),
    },
    {
      // Summarizes the wrong line of the lookup: the population, not the capital.
      name: "summarizes_the_population",
      rate: 0.01,
      when: (v) => seen(v).succeeded("get_country_info"),
      step: () => ({ tool: "summarize", args: { content: "About 2.1 million people live there." } }),
    },
  ],
});

function sequentialWorkflow(): Workflow {
  const fetchData = defineTool({
    name: "fetch_sales_data",
    description: "Load the sales data of one quarter of a year.",
    parameters: z.object({
      quarter: z.number().int().describe("Quarter, 1 to 4"),
      year: z.number().int().describe("Year, four digits"),
    }),
    execute: () => "Loaded 150 rows x 12 columns: sales for Q1 to Q4 of 2024.",
  });
  const analyze = defineTool({
    name: "analyze_sales",
    description: "Analyze the sales data that was loaded and return the findings.",
    parameters: z.object({}),
    execute: () => "Findings: revenue up 23% year over year. Best seller: Widget Pro. Weakest region: APAC.",
  });
  const report = defineTool({
    name: "report",
    description: "Write the final report from the findings.",
    parameters: z.object({ findings: z.string().describe("What the report says") }),
    execute: ({ findings }) => findings,
  });
  return new Workflow({
    name: "sequential_3step",
    tools: { fetch_sales_data: fetchData, analyze_sales: analyze, report },
    requiredSteps: ["fetch_sales_data", "analyze_sales"],
    terminalTool: "report",
    systemPromptTemplate: "You are a sales analyst. Load the data, analyze it, and only then write the report with the report tool.",
  });
}

export const sequential3step: EvalScenario = scenario({
  name: "sequential_3step",
  description: "Required steps in order: load, analyze, then a report that carries the three findings.",
  tags: ["plumbing"],
  userInput: "Put together a sales report from the Q4 2024 data.",
  idealIterations: 3,
  maxIterations: 15,
  budgetTokens: 8192,
  build: () => ({ workflow: sequentialWorkflow(), state: undefined }),
  validate: ({ args }) => mentionsAll(args.findings, ["23", "widget pro", "apac"]),
  oracle: planOracle([
    { tool: "fetch_sales_data", args: () => ({ quarter: 4, year: 2024 }) },
    { tool: "analyze_sales", args: () => ({}) },
    { tool: "report", args: (s) => ({ findings: s.text("analyze_sales") }) },
  ]),
  slips: [
    {
      // Reports straight from the loaded rows: step enforcement sends it to the analysis.
      name: "skips_the_analysis",
      rate: 0.01,
      when: (v) => seen(v).succeeded("fetch_sales_data") && !seen(v).tried("analyze_sales") && !seen(v).triedAfter("report", "fetch_sales_data"),
      step: (v) => ({ tool: "report", args: { findings: `Sales report, Q4 2024. ${seen(v).text("fetch_sales_data")}` } }),
    },
    {
      // Leaves the weakest region out of the report.
      name: "drops_a_finding",
      rate: 0.01,
      when: (v) => seen(v).succeeded("analyze_sales"),
      step: () => ({ tool: "report", args: { findings: "Revenue grew 23% on last year, led by Widget Pro." } }),
    },
  ],
});

/** The format the fetch tool insists on and does not advertise: exactly four digits. */
const PADDED_COUNT = /^\d{4}$/;

function errorRecoveryWorkflow(): Workflow {
  const fetchRecords = defineTool({
    name: "fetch",
    description: "Fetch records. count is a numeric string.",
    parameters: z.object({ count: z.string().describe("How many records, as a numeric string") }),
    execute: ({ count }) => {
      // A plain exception with the fix in its message: the model must read it and call again.
      if (!PADDED_COUNT.test(count)) throw new TypeError(`count must be four digits, zero-padded (like "0042"), got "${count}"`);
      return `Got ${Number(count)} records.`;
    },
  });
  const summarize = defineTool({
    name: "summarize",
    description: "Summarize what was fetched for the user.",
    parameters: z.object({ content: z.string().describe("The summary the user reads") }),
    execute: ({ content }) => content,
  });
  return new Workflow({
    name: "error_recovery",
    tools: { fetch: fetchRecords, summarize },
    requiredSteps: ["fetch"],
    terminalTool: "summarize",
    systemPromptTemplate: "You fetch records on request and then summarize them.",
  });
}

export const errorRecovery: EvalScenario = scenario({
  name: "error_recovery",
  description: "Self-correction after a tool error: the count must be resent zero-padded, then summarized.",
  tags: ["plumbing"],
  userInput: "Get 10 records and give me a summary of them.",
  // The shortest path pads the count the first time; a small model almost never does (its slip).
  idealIterations: 2,
  maxIterations: 15,
  budgetTokens: 8192,
  build: () => ({ workflow: errorRecoveryWorkflow(), state: undefined }),
  validate: ({ args }) => mentionsAll(args.content, ["10", "record"]),
  oracle: planOracle([
    { tool: "fetch", args: () => ({ count: "0010" }) },
    { tool: "summarize", args: (s) => ({ content: s.text("fetch") }) },
  ]),
  slips: [
    {
      // Sends the count as the user said it; the TypeError says how to fix it, and only a
      // loop that lets the model see the error and call again gets there.
      name: "unpadded_count",
      rate: 0.97,
      when: (v) => !seen(v).tried("fetch"),
      step: () => ({ tool: "fetch", args: { count: "10" } }),
    },
  ],
});

export const PLUMBING: EvalScenario[] = [basic2step, sequential3step, errorRecovery];
