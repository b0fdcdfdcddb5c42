/**
 * One eval run as a JSONL line, and the JSONL file it lives in. The resume key
 * `${config}|${scenario}|${runIndex}` is stable, so a batch can skip what is already written.
 */
import { appendFileSync, existsSync, readFileSync, truncateSync } from "node:fs";
import { z } from "zod";
import { InvalidArgumentError } from "../src/core/index.js";

export const RunRecordSchema = z.object({
  key: z.string(),
  config: z.string(),
  backend: z.string(),
  model: z.string(),
  mode: z.string().optional(),
  ablation: z.string(),
  scenario: z.string(),
  tags: z.array(z.string()),
  runIndex: z.number().int().nonnegative(),
  seed: z.number().int(),
  /** The suite generation the run was measured with; records from before the field are generation 1. */
  generation: z.number().int().positive().default(1),
  completed: z.boolean(),
  /** Validated and passed; false when the validator threw (see validationError). */
  correct: z.boolean(),
  /** The scenario's validate threw: the run was attempted, not validated (left out of validated accuracy). */
  validationError: z.string().optional(),
  iterations: z.number().int().nonnegative(),
  idealIterations: z.number().int().positive(),
  wastedCalls: z.number().int().nonnegative(),
  elapsedMs: z.number().nonnegative(),
  compactions: z.number().int().nonnegative(),
  compactionPhases: z.array(z.number().int()),
  streamRetries: z.number().int().nonnegative(),
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
  retryNudges: z.number().int().nonnegative(),
  stepNudges: z.number().int().nonnegative(),
  prereqNudges: z.number().int().nonnegative(),
  rescues: z.number().int().nonnegative(),
  toolErrors: z.number().int().nonnegative(),
  /** Assistant reasoning messages the run produced; records from before the field read 0. */
  reasoningMessages: z.number().int().nonnegative().default(0),
  errorType: z.string().optional(),
  errorMessage: z.string().optional(),
  injectedFaults: z.array(z.string()).optional(),
  timestamp: z.string(),
  // The config axes (eval/axes.ts): the budget every run used, and the axes set on its config.
  budgetTokens: z.number().int().positive().optional(),
  toolChoice: z.enum(["auto", "any"]).optional(),
  reasoningReplay: z.enum(["none", "keep-last", "full"]).optional(),
  reasoningEffort: z.string().optional(),
});
export type RunRecord = z.infer<typeof RunRecordSchema>;

/** @example resumeKey("sim:small-model@bare", "basic_2step", 3) // "sim:small-model@bare|basic_2step|3" */
export function resumeKey(config: string, scenario: string, runIndex: number): string {
  return `${config}|${scenario}|${runIndex}`;
}

/**
 * Parse JSONL text; a malformed line is an error naming its line number. The one exception is
 * a last line without its newline (a run killed mid-write): it is skipped and reported through
 * `onPartial`, since the batch that resumes will redo that run.
 */
export function parseRecords(text: string, source = "<jsonl>", onPartial?: (message: string) => void): RunRecord[] {
  const out: RunRecord[] = [];
  const lines = text.split("\n");
  const partial = text.endsWith("\n") ? -1 : lines.length - 1;
  for (const [i, line] of lines.entries()) {
    if (line.trim() === "") continue;
    if (i === partial && onPartial && !isRecordLine(line)) {
      onPartial(`${source}:${i + 1}: skipped an incomplete last line (${line.length} chars) left by an interrupted run`);
      continue;
    }
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch (cause) {
      throw new InvalidArgumentError("results", `${source}:${i + 1} is not JSON (${(cause as Error).message})`);
    }
    const parsed = RunRecordSchema.safeParse(json);
    if (!parsed.success) throw new InvalidArgumentError("results", `${source}:${i + 1} is not a run record: ${parsed.error.issues[0]?.message}`);
    out.push(parsed.data);
  }
  return out;
}

function isRecordLine(line: string): boolean {
  try {
    return RunRecordSchema.safeParse(JSON.parse(line)).success;
  } catch {
    return false;
  }
}

const stderrLog = (line: string) => process.stderr.write(`${line}\n`);

/** @example readRecords("eval_results.jsonl") // [] when the file does not exist yet */
export function readRecords(path: string, log: (line: string) => void = stderrLog): RunRecord[] {
  if (!existsSync(path)) return [];
  return parseRecords(readFileSync(path, "utf8"), path, (m) => log(`[eval] ${m}`));
}

/**
 * Open a results file for appending. A run killed mid-write can leave a partial last line
 * (no trailing newline); it is cut off here — loudly — so the run is simply redone.
 */
export function openResults(path: string, log: (line: string) => void = stderrLog): { records: RunRecord[]; append(record: RunRecord): void } {
  if (existsSync(path)) {
    const text = readFileSync(path, "utf8");
    if (text.length > 0 && !text.endsWith("\n")) {
      const keep = text.lastIndexOf("\n") + 1;
      log(`[eval] ${path}: dropping a partial last line (${text.length - keep} bytes) left by an interrupted run`);
      truncateSync(path, Buffer.byteLength(text.slice(0, keep)));
    }
  }
  const records = readRecords(path, log);
  return {
    records,
    // One write per line: the line and its newline land together or not at all for the reader.
    append: (record) => appendFileSync(path, `${JSON.stringify(RunRecordSchema.parse(record))}\n`),
  };
}
