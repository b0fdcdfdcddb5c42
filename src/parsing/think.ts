/**
 * Reasoning split. Calls inside reasoning are never rescued, so this runs before any parser.
 * Handles <think>…</think>, a leading "…</think>" whose opener was in the prompt (Qwen3 and
 * DeepSeek-R1 templates), [THINK]…[/THINK] (Magistral), <|START_THINKING|>…<|END_THINKING|>
 * (Command R7B), <seed:think>…</seed:think> (Seed-OSS), `<|channel>thought\n…<channel|>`
 * (Gemma 4), an unclosed opener at the end (all reasoning), and gpt-oss Harmony analysis
 * messages (`<|channel|>analysis<|message|>…<|end|>`).
 */
import { InvalidArgumentError } from "../core/errors.js";
import { nextFinder } from "./json-scan.js";

const PAIRS: readonly [string, string][] = [
  ["<think>", "</think>"],
  ["[THINK]", "[/THINK]"],
  ["<|START_THINKING|>", "<|END_THINKING|>"], // Command R7B
  ["<seed:think>", "</seed:think>"], // Seed-OSS (its <seed:cot_budget_reflect> notes sit inside)
  ["<|channel>thought", "<channel|>"], // Gemma 4
];
const ANALYSIS = "<|channel|>analysis<|message|>";

/**
 * Split reasoning off model text.
 *
 * @example
 * splitReasoning("<think>user wants weather</think>It is sunny.");
 * // → { content: "It is sunny.", reasoning: "user wants weather" }
 */
export function splitReasoning(text: string): { content: string; reasoning?: string } {
  if (typeof text !== "string") throw new InvalidArgumentError("text", `expected a string, got ${typeof text}`);
  const reasoning: string[] = [];
  let content = text;
  for (const [open, close] of PAIRS) content = splitPair(content, open, close, reasoning);
  content = splitHarmony(content, reasoning);
  const joined = reasoning.map((r) => r.trim()).filter((r) => r !== "").join("\n\n");
  return joined === "" ? { content } : { content, reasoning: joined };
}

function splitPair(text: string, open: string, close: string, out: string[]): string {
  let rest = text;
  const firstClose = rest.indexOf(close);
  const firstOpen = rest.indexOf(open);
  if (firstClose >= 0 && (firstOpen < 0 || firstClose < firstOpen)) {
    out.push(rest.slice(0, firstClose));
    rest = rest.slice(firstClose + close.length);
  }
  let content = "";
  let pos = 0;
  while (true) {
    const o = rest.indexOf(open, pos);
    if (o < 0) break;
    content += rest.slice(pos, o);
    const c = rest.indexOf(close, o + open.length);
    if (c < 0) {
      out.push(rest.slice(o + open.length));
      pos = rest.length;
      break;
    }
    out.push(rest.slice(o + open.length, c));
    pos = c + close.length;
  }
  return content + rest.slice(pos);
}

function splitHarmony(text: string, out: string[]): string {
  // Finders keep this linear when one of the end tokens never occurs.
  const findEnd = nextFinder(text, "<|end|>");
  const findStart = nextFinder(text, "<|start|>");
  let content = "";
  let pos = 0;
  while (true) {
    const a = text.indexOf(ANALYSIS, pos);
    if (a < 0) break;
    // Drop the "<|start|>assistant" that opened this analysis message, if it is right there.
    const head = text.slice(pos, a);
    content += head.endsWith("<|start|>assistant") ? head.slice(0, -"<|start|>assistant".length) : head;
    const bodyStart = a + ANALYSIS.length;
    const ends = [findEnd(bodyStart), findStart(bodyStart)].filter((x) => x >= 0);
    const end = ends.length > 0 ? Math.min(...ends) : text.length;
    out.push(text.slice(bodyStart, end));
    pos = text.startsWith("<|end|>", end) ? end + "<|end|>".length : end;
  }
  return content + text.slice(pos);
}
