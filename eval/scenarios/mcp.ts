/**
 * MCP scenarios: the model works through tools a real MCP server lists (server-filesystem over
 * stdio, see mcp-workspace.ts), with the server's own descriptions, schemas, results and
 * refusals. It lists the allowed directories to find where the files are, reads, and answers
 * with a local terminal tool; one variant recovers from the server's "no such file" on the
 * tool-error channel, one has required steps and prerequisites naming MCP tools, one writes every
 * call as text (a backend without a native tool parser) that rescue parsing must read.
 */
import { z } from "zod";
import { defineTool, Workflow, type AnyToolDef, type Prerequisite } from "../../src/core/index.js";
import { renderToolCalls, type RescueFormat } from "../../src/parsing/index.js";
import { scenario, type EvalScenario, type Oracle, type OracleView } from "../scenario.js";
import { MCP_WORKSPACE, WORKSPACE } from "./mcp-workspace.js";
import { planOracle, Seen, type PlanStep } from "./oracle-kit.js";

const LIST_ROOTS = "fs_list_allowed_directories";
const LIST_DIR = "fs_list_directory";
const READ = "fs_read_text_file";

/** The text of an MCP result: server-filesystem answers structured `{ content }`, shown as JSON. */
function textOf(content: string): string {
  try {
    const parsed: unknown = JSON.parse(content);
    if (parsed !== null && typeof parsed === "object" && typeof (parsed as { content?: unknown }).content === "string") return (parsed as { content: string }).content;
  } catch {
    // Not JSON: a plain text result is its own text.
  }
  return content;
}

/** `key: value` (or `KEY=value`) from the latest successful read of `file`, or `fallback` when none is visible. */
function fact(seen: Seen, file: string, key: string, fallback: string): string {
  const read = seen.successes(READ).findLast((r) => r.args.path === file);
  return read ? (textOf(read.content).match(new RegExp(`^${key}\\s*[:=]\\s*(.+)$`, "m"))?.[1]?.trim() ?? fallback) : fallback;
}

/** The first allowed directory the model was shown (it does not know the path before it asks). */
function listedRoot(seen: Seen): string | undefined {
  const listed = seen.successes(LIST_ROOTS).at(-1);
  return listed ? textOf(listed.content).split("\n")[1]?.trim() : undefined;
}

const listRoots: PlanStep = { tool: LIST_ROOTS, args: () => ({}) };
/** A read of `file` under whatever directory the listing showed. */
const read = (file: string): PlanStep => ({ tool: READ, args: (s) => ({ path: `${listedRoot(s) ?? "?"}/${file}` }) });

/** A workflow on the shared server's tools plus a local terminal answer tool. */
function mcpWorkflow(name: string, answer: AnyToolDef, options: { requiredSteps: string[]; systemPromptTemplate: string }): Workflow {
  return new Workflow({ name, tools: { ...MCP_WORKSPACE.value.tools, [answer.name]: answer }, terminalTool: answer.name, ...options });
}

const base = { tags: ["mcp"], maxIterations: 10, budgetTokens: 8192, fixture: MCP_WORKSPACE };
const PROMPT = "You answer questions about the files in the allowed directories. List the allowed directories first to learn where they are, then read what you need, and finish with the answer tool.";

const reportRelease = (prerequisites: Prerequisite[] = []) =>
  defineTool({
    name: "report_release",
    description: "Give the user the release summary (the final answer).",
    parameters: z.object({ version: z.string(), ship_date: z.string().describe("YYYY-MM-DD"), owner: z.string(), summary: z.string().min(1) }),
    prerequisites,
    execute: (a) => `reported release ${a.version}`,
  });

export const mcpReadSummarize: EvalScenario = scenario({
  ...base,
  name: "mcp_read_summarize",
  description: "MCP tools end to end: list the allowed directories, read a file, summarize it in the terminal answer.",
  userInput: "Summarize notes/release.md for me: which version ships, when, and who owns the release?",
  idealIterations: 3,
  build: () => ({ workflow: mcpWorkflow("mcp_read_summarize", reportRelease(), { requiredSteps: [READ], systemPromptTemplate: PROMPT }), state: undefined }),
  validate: ({ args }) => args.version === "2.4.0" && args.ship_date === "2025-06-12" && args.owner === "Priya Raman" && typeof args.summary === "string" && args.summary.includes("2.4.0"),
  oracle: planOracle([
    listRoots,
    read("notes/release.md"),
    {
      tool: "report_release",
      args: (s) => {
        const file = `${listedRoot(s)}/notes/release.md`;
        const [version, date, owner] = [fact(s, file, "version", "?"), fact(s, file, "ship_date", "?"), fact(s, file, "owner", "?")];
        return { version, ship_date: date, owner, summary: `Version ${version} ships on ${date}; ${owner} owns the release.` };
      },
    },
  ]),
});

/**
 * The user names the file wrongly (oncall.md); the server answers isError ("no such file"), the
 * model sees it as a tool error, lists the directory and reads the file that is there.
 */
function onCallOracle(view: OracleView): ReturnType<Oracle> {
  const seen = new Seen(view.results);
  const root = listedRoot(seen);
  if (root === undefined) return { tool: LIST_ROOTS, args: {} };
  if (!seen.tried(READ)) return { tool: READ, args: { path: `${root}/oncall.md` } };
  const listing = seen.successes(LIST_DIR).at(-1);
  if (!listing) return { tool: LIST_DIR, args: { path: root } };
  const name = textOf(listing.content).match(/^\[FILE\] (\S*call\S*)$/im)?.[1] ?? "oncall.md";
  const file = `${root}/${name}`;
  if (!seen.successes(READ).some((r) => r.args.path === file)) return { tool: READ, args: { path: file } };
  return { tool: "report_on_call", args: { week: fact(seen, file, "week", "?"), primary: fact(seen, file, "primary", "?"), backup: fact(seen, file, "backup", "?") } };
}

export const mcpMissingPath: EvalScenario = scenario({
  ...base,
  name: "mcp_missing_path",
  description: "The server's isError (a file that does not exist) reaches the model as a tool error; it lists the directory and reads the right file.",
  userInput: "Who is on call this week, and who is the backup? The rota is in oncall.md.",
  idealIterations: 5,
  build: () => {
    const answer = defineTool({
      name: "report_on_call",
      description: "Tell the user who is on call (the final answer).",
      parameters: z.object({ week: z.string(), primary: z.string(), backup: z.string() }),
      execute: (a) => `reported ${a.primary}`,
    });
    return { workflow: mcpWorkflow("mcp_missing_path", answer, { requiredSteps: [READ], systemPromptTemplate: PROMPT }), state: undefined };
  },
  validate: ({ args }) => args.week === "2025-W24" && args.primary === "Tomas Ortega" && args.backup === "Mei Lin",
  oracle: onCallOracle,
});

const CONFIG = `${WORKSPACE}/config/payments.env`;
const CHECKLIST = `${WORKSPACE}/notes/deploy-checklist.md`;

export const mcpStepsPrereqs: EvalScenario = scenario({
  ...base,
  name: "mcp_steps_prereqs",
  description: "Required steps and prerequisites name MCP tools: both files must be read (by path) before the verdict, and listing before reading.",
  userInput: "Does the payments service config (config/payments.env) use the port the deploy checklist (notes/deploy-checklist.md) requires?",
  idealIterations: 4,
  build: () => {
    const verdict = defineTool({
      name: "report_port_check",
      description: "Report the configured port, the required port and whether they match (the final answer).",
      parameters: z.object({ configured_port: z.number().int(), required_port: z.number().int(), matches: z.boolean() }),
      // Both reads, by path: a verdict from one file (or from the question) is refused.
      prerequisites: [{ tool: READ, args: { path: CONFIG } }, { tool: READ, args: { path: CHECKLIST } }],
      execute: (a) => `port check: ${a.matches ? "ok" : "mismatch"}`,
    });
    return { workflow: mcpWorkflow("mcp_steps_prereqs", verdict, { requiredSteps: [LIST_ROOTS, READ], systemPromptTemplate: PROMPT }), state: undefined };
  },
  validate: ({ args }) => args.configured_port === 8080 && args.required_port === 8443 && args.matches === false,
  oracle: planOracle([
    listRoots,
    read("config/payments.env"),
    read("notes/deploy-checklist.md"),
    {
      tool: "report_port_check",
      args: (s) => {
        const root = listedRoot(s);
        const configured = Number(fact(s, `${root}/config/payments.env`, "PORT", "0"));
        const required = Number(fact(s, `${root}/notes/deploy-checklist.md`, "required_port", "0"));
        return { configured_port: configured, required_port: required, matches: configured === required };
      },
    },
  ]),
});

/** The text-format model's format: Qwen2.5/Hermes templates write calls as `<tool_call>` JSON. */
const TEXT_FORMAT: RescueFormat = "hermes";

/** Every call of `oracle` written as text in `format`, as a model served without a native tool-call parser does. */
function asText(oracle: Oracle, format: RescueFormat): Oracle {
  return (view) => {
    const step = oracle(view);
    if ("text" in step) return step;
    return { text: renderToolCalls("calls" in step ? step.calls : [step], format) };
  };
}

export const mcpRescueText: EvalScenario = scenario({
  ...base,
  name: "mcp_rescue_text",
  description: "Every MCP call (and the answer) is written as Hermes <tool_call> text: only rescue parsing turns it into calls.",
  userInput: "What license is the project under, and who maintains it? See README.md.",
  idealIterations: 3,
  build: () => {
    const answer = defineTool({
      name: "report_project",
      description: "Tell the user the license and maintainer (the final answer).",
      parameters: z.object({ license: z.string(), maintainer: z.string() }),
      execute: (a) => `reported ${a.license}`,
    });
    return { workflow: mcpWorkflow("mcp_rescue_text", answer, { requiredSteps: [READ], systemPromptTemplate: PROMPT }), state: undefined };
  },
  validate: ({ args }) => args.license === "Apache-2.0" && args.maintainer === "Ines Duarte",
  oracle: asText(
    planOracle([
      listRoots,
      read("README.md"),
      {
        tool: "report_project",
        args: (s) => ({ license: fact(s, `${listedRoot(s)}/README.md`, "license", "?"), maintainer: fact(s, `${listedRoot(s)}/README.md`, "maintainer", "?") }),
      },
    ]),
    TEXT_FORMAT,
  ),
});

/** @example selectScenarios({ tags: ["mcp"] }) // MCP */
export const MCP: EvalScenario[] = [mcpReadSummarize, mcpMissingPath, mcpStepsPrereqs, mcpRescueText];
