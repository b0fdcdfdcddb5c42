/**
 * How the scripted model answers, the way small models do: per case, its first answer to the
 * task "create hello.txt containing forge" is the agent's file-writing call in one shape (native,
 * Hermes text, bare JSON, Mistral text, a misspelled name, arguments missing the path); after a
 * nudge or a failed tool result it makes the correct native call; after the correct call's
 * result it answers in a short sentence. Requests without a write tool (titles, summaries, the
 * agents' side questions) get a short sentence, or, when they ask for a JSON answer (Ollama's
 * `format`: a client's structured output), the file the task names as JSON: FILE_JSON.
 */
import type { ModelReply } from "../../clients/support/wire.js";
import type { CallView, RequestView, ToolView, Turn } from "./request-view.js";

export const CASES = ["native", "hermes", "bare-json", "mistral", "misspelled", "bad-args"] as const;
export type CaseName = (typeof CASES)[number];
/** The cases whose first answer is a call written as text: no agent runs them on its own. */
export const TEXT_CASES: readonly CaseName[] = ["hermes", "bare-json", "mistral"];

/**
 * The cases an agent runs: every case through the proxy and every text case directly (the
 * default: `npm run test:agents`, the lift table), or with `FORGE_AGENT_CASES=ci` (CI's pass)
 * native, misspelled, bad-args and one text format, through the proxy and directly, the format
 * rotating with the agent's place in `agents` so each format still runs through some agent
 * every time. The other pairings test the same parser on the same agent dialect; each case costs
 * an agent start (up to 16 CPU-s, opencode).
 *
 * @example
 * agentCases("codex", ["claude-code", "codex"], "ci"); // { proxy: ["native", "bare-json", "misspelled", "bad-args"], direct: ["bare-json"] }
 */
export function agentCases(agent: string, agents: readonly string[], selection = process.env.FORGE_AGENT_CASES): { proxy: readonly CaseName[]; direct: readonly CaseName[] } {
  if (selection === undefined || selection === "all") return { proxy: CASES, direct: TEXT_CASES };
  if (selection !== "ci") throw new Error(`FORGE_AGENT_CASES=${selection}: give "all" (the default) or "ci"`);
  const index = agents.indexOf(agent);
  if (index < 0) throw new Error(`agentCases: ${agent} is not one of ${agents.join(", ")}`);
  const format = TEXT_CASES[index % TEXT_CASES.length]!;
  return { proxy: CASES.filter((c) => !TEXT_CASES.includes(c) || c === format), direct: [format] };
}

export const FILE_NAME = "hello.txt";
export const FILE_CONTENT = "forge";
export const TASK = `Create a file named ${FILE_NAME} in the current directory containing exactly the word ${FILE_CONTENT}.`;
export const FINAL_TEXT = `Done: ${FILE_NAME} now contains ${FILE_CONTENT}.`;
/** The structured answer: the file the task asks for. */
export const FILE_JSON = { path: FILE_NAME, content: FILE_CONTENT };

/** The agent's tool that creates the file, and the arguments that do it right. */
export interface WriteTool {
  name: string;
  args: Record<string, unknown>;
  /** The argument the bad-args case leaves out (the path, or the command). */
  requiredKey: string;
}

const PATH_KEYS = ["file_path", "filePath", "path"] as const;
const propsOf = (t: ToolView): Record<string, unknown> => (t.schema.properties as Record<string, unknown> | undefined) ?? {};

/**
 * The file-writing tool among the request's tools, found by schema: a `content` argument beside
 * a path (Claude Code `Write`, opencode `write`, Qwen Code `write_file`, pi `write`); for Codex,
 * which writes files from its shell, its `shell` / `exec_command` tool.
 *
 * @example
 * findWriteTool([{ name: "write", schema: { properties: { path: {}, content: {} } } }], "/tmp/w")?.args; // { path: "/tmp/w/hello.txt", content: "forge" }
 */
export function findWriteTool(tools: readonly ToolView[], workdir: string): WriteTool | undefined {
  const file = tools.find((t) => "content" in propsOf(t) && PATH_KEYS.some((k) => k in propsOf(t)) && /write/i.test(t.name));
  if (file) {
    const key = PATH_KEYS.find((k) => k in propsOf(file))!;
    return { name: file.name, args: { [key]: `${workdir}/${FILE_NAME}`, content: FILE_CONTENT }, requiredKey: key };
  }
  const script = `printf ${FILE_CONTENT} > ${FILE_NAME}`;
  const shell = tools.find((t) => "command" in propsOf(t) && /shell/.test(t.name));
  if (shell) {
    const command = (propsOf(shell).command as { type?: string }).type === "array" ? ["bash", "-lc", script] : script;
    return { name: shell.name, args: { command, workdir }, requiredKey: "command" };
  }
  const exec = tools.find((t) => "cmd" in propsOf(t));
  if (exec) return { name: exec.name, args: { cmd: script, workdir }, requiredKey: "cmd" };
  return undefined;
}

/** A near-miss name, the way a small model misspells one: `Write` → `Wirte`. */
export function misspell(name: string): string {
  return name.length < 3 ? `${name}_` : `${name[0]}${name[2]}${name[1]}${name.slice(3)}`;
}

const callJson = (tool: WriteTool): string => JSON.stringify({ name: tool.name, arguments: tool.args });

function firstAnswer(kase: CaseName, tool: WriteTool): ModelReply {
  switch (kase) {
    case "native":
      return { toolCalls: [{ name: tool.name, args: tool.args }] };
    case "hermes":
      return { content: `I'll create the file now.\n<tool_call>\n${callJson(tool)}\n</tool_call>` };
    case "bare-json":
      return { content: callJson(tool) };
    case "mistral":
      return { content: `[TOOL_CALLS][${callJson(tool)}]` };
    case "misspelled":
      return { toolCalls: [{ name: misspell(tool.name), args: tool.args }] };
    case "bad-args": {
      const { [tool.requiredKey]: _dropped, ...rest } = tool.args;
      return { toolCalls: [{ name: tool.name, args: rest }] };
    }
  }
}

const isCorrect = (call: CallView, tool: WriteTool): boolean => call.name === tool.name && JSON.stringify(call.args) === JSON.stringify(tool.args);
// A failed result, in the words the agents and the proxy use for one.
const ERROR_TEXT = /^\s*(error|\[[A-Za-z]+\])|<tool_use_error>|\binvalid\b|\bnot found\b|\bunknown tool\b|\bfailed\b/i;
// The proxy's user-channel nudge after a reply without a usable call (src/guardrails/nudges.ts).
const NUDGE_TEXT = /you act only through tools|^\s*\[[A-Za-z]+\]/;

const failed = (t: Turn): boolean => t.isError === true || ERROR_TEXT.test(t.text);

/**
 * The scripted model's answer to one request.
 *
 * @example
 * answer("native", view, "/tmp/w"); // { toolCalls: [{ name: "write", args: { path: "/tmp/w/hello.txt", content: "forge" } }] }
 */
export function answer(kase: CaseName, view: RequestView, workdir: string): ModelReply {
  const tool = findWriteTool(view.tools, workdir);
  if (!tool) return { content: view.format === undefined ? "Creating hello.txt" : JSON.stringify(FILE_JSON) };
  const lastAssistant = view.turns.findLastIndex((t) => t.role === "assistant");
  if (lastAssistant < 0) return firstAnswer(kase, tool);
  const made = view.turns[lastAssistant]!;
  const after = view.turns.slice(lastAssistant + 1);
  const results = after.filter((t) => t.role === "tool");
  const correct = { toolCalls: [{ name: tool.name, args: tool.args }] };
  if (results.length > 0) {
    const done = made.calls.length > 0 && made.calls.every((c) => isCorrect(c, tool)) && !results.some(failed);
    return done ? { content: FINAL_TEXT } : correct;
  }
  if (after.some((t) => t.role === "user" && NUDGE_TEXT.test(t.text))) return correct;
  // Anything else (the agent's own "continue"): the model keeps its habit.
  return firstAnswer(kase, tool);
}
