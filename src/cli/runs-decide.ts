/**
 * `forge-ts runs approve|reject|answer`: a person's decision on a waiting run, recorded in its
 * store from this process (the run itself need not be loaded); and how every runs command shows
 * a run that waits: its pending requests, the commands that decide them and the one that goes on.
 */
import { redactCall, type RedactionMap } from "../telemetry/redact-run.js";
import { ForgeError, InvalidArgumentError, type PendingHumanRequest } from "../core/errors.js";
import { isPlainObject } from "../core/json-value.js";
import type { HumanDecision } from "../loop/human.js";
import type { RunStore } from "../persistence/run-store.js";
import { recordDecision } from "../runner/decisions.js";
import { errorLine } from "../cli-kit/run-cli.js";
import { cliCommand } from "../cli-kit/cli-command.js";
import { resumeCommand, shellWord, storeFlag, type HintFlags } from "../cli-kit/resume-command.js";

export const DECIDE_COMMANDS = ["approve", "reject", "answer"] as const;
export type DecideCommand = (typeof DECIDE_COMMANDS)[number];

/** The decision flags of `runs approve|reject|answer`. */
export interface DecideFlags {
  /** The queue the run was enqueued on: once nothing is pending, the run goes back in it. */
  redis?: string | undefined;
  args?: string | undefined;
  reason?: string | undefined;
  answer?: string | undefined;
  json?: boolean | undefined;
}

/**
 * A waiting run as lines: each pending request (call id, tool, kind, args, when asked), how to
 * decide each, and how to continue.
 *
 * @example
 * console.log(waitingLines("r1", outcome.requests, values, redactionMapOf(workflow.tools)).join("\n"));
 */
export function waitingLines(runId: string, requests: readonly PendingHumanRequest[], f: HintFlags, redact?: RedactionMap): string[] {
  const lines = [`run ${runId} is waiting for a person (${requests.length} pending):`];
  // Printed args are a report: the tools' `redact` names are masked.
  for (const r of requests) lines.push(`  ${r.callId}  ${r.tool}  ${r.kind}  ${JSON.stringify(redactCall(r.tool, r.args, redact))}  asked ${new Date(r.askedAt).toISOString()}`);
  const store = storeFlag(f);
  const runs = `${cliCommand()} runs`;
  for (const r of requests) {
    const call = `${shellWord(runId)} ${shellWord(r.callId)}`;
    lines.push(
      r.kind === "approval"
        ? `decide: ${runs} approve ${call} [--args <json>]${store}   or   ${runs} reject ${call} --reason <text>${store}`
        : `decide: ${runs} answer ${call} --answer <text|json>${store}   or   ${runs} reject ${call} --reason <text>${store}`,
    );
  }
  lines.push(`then:   ${resumeCommand(runId, f)}`);
  return lines;
}

/** `--answer`: a JSON value when it parses as one, else the text itself. */
export function parseAnswer(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function decisionOf(command: DecideCommand, f: DecideFlags): HumanDecision {
  const misplaced = (["args", "reason", "answer"] as const).filter((k) => f[k] !== undefined && k !== { approve: "args", reject: "reason", answer: "answer" }[command]);
  if (misplaced.length > 0) throw new InvalidArgumentError(`--${misplaced[0]}`, `does not go with runs ${command}`);
  if (command === "reject") {
    if (f.reason === undefined || f.reason.trim() === "") throw new InvalidArgumentError("--reason", "runs reject needs a reason (the model sees it)");
    return { type: "reject", reason: f.reason };
  }
  if (command === "answer") {
    if (f.answer === undefined) throw new InvalidArgumentError("--answer", "runs answer needs the answer (text, or a JSON value)");
    return { type: "answer", answer: parseAnswer(f.answer) };
  }
  if (f.args === undefined) return { type: "approve" };
  let args: unknown;
  try {
    args = JSON.parse(f.args);
  } catch (error) {
    throw new InvalidArgumentError("--args", `not JSON: ${(error as Error).message}`);
  }
  if (!isPlainObject(args)) throw new InvalidArgumentError("--args", "the edited arguments must be a JSON object");
  return { type: "approve", args };
}

const DONE: Record<DecideCommand, string> = { approve: "approved", reject: "rejected", answer: "answered" };

/**
 * Record the decision and print one line (or the receipt as JSON). Resolves to the exit code:
 * 0 recorded (or already recorded), 2 a decision the run refuses (printed on stderr).
 */
export async function decideMain(command: DecideCommand, store: RunStore, runId: string, callId: string | undefined, f: DecideFlags & HintFlags): Promise<number> {
  const decision = decisionOf(command, f);
  let receipt;
  try {
    receipt = await recordDecision(store, runId, { ...(callId !== undefined ? { callId } : {}), decision }, Date.now());
  } catch (error) {
    // isInstance checks the brand of every ForgeError; the code tells which one.
    if (!ForgeError.isInstance(error) || error.code !== "FORGE_HUMAN_DECISION") throw error;
    console.error(errorLine(error));
    return 2;
  }
  const requeued = f.redis !== undefined && receipt.pending.length === 0 ? await requeue(f.redis, store, runId) : undefined;
  if (f.json) return console.log(JSON.stringify(requeued === undefined ? receipt : { ...receipt, requeued }, null, 2)), 0;
  const what = `${receipt.tool} (call ${receipt.callId}) on run ${runId}`;
  const recorded = receipt.duplicate ? `already recorded: ${command} of ${what}` : `${DONE[command]} ${what}${decision.type === "reject" ? `: ${decision.reason}` : ""}`;
  const pending = receipt.pending.map((r) => `${r.callId} (${r.tool}, ${r.kind})`).join(", ") || "none";
  const next = requeued === "requeued" ? "back in the queue: a worker continues it" : requeued === "not-waiting" ? "its job is not parked waiting (still queued or running?)" : `continue with: ${resumeCommand(runId, f)}`;
  console.log(`${recorded}; still pending: ${pending}; ${next}`);
  return 0;
}

/** A queued run decided: its parked job goes back in the queue (queue.resumeRun). */
async function requeue(redis: string, store: RunStore, runId: string): Promise<"requeued" | "not-waiting"> {
  const workflow = (await store.latest(runId))!.workflow;
  // Loaded only with --redis: BullMQ and ioredis are most of a command's start-up otherwise.
  const { createRunQueue } = await import("../queue/run-queue.js");
  const queue = createRunQueue({ redis });
  try {
    return await queue.resumeRun(workflow, runId);
  } finally {
    await queue.close();
  }
}
