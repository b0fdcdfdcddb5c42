/**
 * Time travel from the command line: `forge-ts runs show <runId> --history` lists a run's
 * commits (seq, state) to pick one from, and `forge-ts runs fork <runId> --at <seq>` starts a
 * new run there, optionally with a message reworded or a pending call's args edited.
 */
import { InvalidArgumentError } from "../core/errors.js";
import type { Message } from "../core/messages.js";
import { isPlainObject } from "../core/json-value.js";
import type { Workflow } from "../core/workflow.js";
import { isFinalStatus, type Checkpoint, type RunStatus, type RunStore } from "../persistence/run-store.js";
import { forkRun, type ForkPatch } from "../runner/fork.js";
import { cliCommand } from "../cli-kit/cli-command.js";
import { resumeCommand, shellWord, storeFlag, type HintFlags } from "../cli-kit/resume-command.js";

export interface ForkFlags extends HintFlags {
  at?: string | undefined;
  "patch-message"?: string[] | undefined;
  "patch-args"?: string[] | undefined;
  "run-id"?: string | undefined;
  json?: boolean | undefined;
}

/** One commit of a run as the history lists it. */
export interface CommitSummary {
  seq: number;
  state: string;
  status: RunStatus;
  iteration: number;
  messages: number;
  savedAt: number;
}

/**
 * Every commit of a run, oldest first, each rebuilt from the log (the same state a fork from it
 * starts with). One read per commit: fine for a person picking a seq, not for a hot path.
 */
export async function commitHistory(store: RunStore, last: Checkpoint): Promise<CommitSummary[]> {
  const out: CommitSummary[] = [];
  for (let seq = 1; seq <= last.seq; seq++) {
    const c = seq === last.seq ? last : await store.latest(last.runId, { seq });
    if (!c) continue;
    out.push({ seq, state: c.state, status: c.status, iteration: c.snapshot.context.iteration, messages: c.snapshot.context.messages.length, savedAt: c.savedAt });
  }
  return out;
}

/** The history as a table, with which commits a fork can start from. */
export function historyLines(runId: string, commits: readonly CommitSummary[], f: Pick<HintFlags, "store"> = {}): string[] {
  const rows = commits.map((c) => [String(c.seq), c.state, c.status, String(c.iteration), String(c.messages), new Date(c.savedAt).toISOString(), isFinalStatus(c.status) ? "" : "yes"]);
  const head = ["seq", "state", "status", "iteration", "messages", "saved", "forkable"];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const table = [head, ...rows].map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd());
  return [...table, `fork from a commit: ${cliCommand()} runs fork ${shellWord(runId)} --at <seq> [--patch-message <index>=<text>] [--patch-args <callId>=<json>]${storeFlag(f)}`];
}

/** `i=text` and `callId=json`: split at the first "=". */
function pair(flag: string, raw: string): [string, string] {
  const at = raw.indexOf("=");
  if (at <= 0) throw new InvalidArgumentError(`--${flag}`, `expected <key>=<value>, got ${JSON.stringify(raw)}`);
  return [raw.slice(0, at), raw.slice(at + 1)];
}

/** The patch the flags describe: message contents replaced by index, call args by call id. */
export function patchFromFlags(f: Pick<ForkFlags, "patch-message" | "patch-args">): ForkPatch {
  const contents = new Map<number, string>();
  for (const raw of f["patch-message"] ?? []) {
    const [key, text] = pair("patch-message", raw);
    const index = Number(key);
    if (!Number.isSafeInteger(index) || index < 0) throw new InvalidArgumentError("--patch-message", `expected <index>=<text> with a message index (0, 1, ...), got ${JSON.stringify(key)}`);
    contents.set(index, text);
  }
  const args: Record<string, Record<string, unknown>> = {};
  for (const raw of f["patch-args"] ?? []) {
    const [callId, json] = pair("patch-args", raw);
    let value: unknown;
    try {
      value = JSON.parse(json);
    } catch (error) {
      throw new InvalidArgumentError("--patch-args", `args for call ${callId} are not JSON: ${(error as Error).message}`);
    }
    if (!isPlainObject(value)) throw new InvalidArgumentError("--patch-args", `args for call ${callId} must be a JSON object`);
    args[callId] = value;
  }
  const patch: ForkPatch = {};
  if (contents.size > 0) patch.messages = (messages) => replaceContents(messages, contents);
  if (Object.keys(args).length > 0) patch.args = args;
  return patch;
}

function replaceContents(messages: Message[], contents: ReadonlyMap<number, string>): Message[] {
  for (const index of contents.keys()) {
    if (index >= messages.length) throw new InvalidArgumentError("--patch-message", `the commit has messages 0 to ${messages.length - 1}, not ${index} (see forge-ts runs show <runId> --json)`);
  }
  // The old content's token estimate would be wrong for the new one.
  return messages.map((m, i) => {
    const content = contents.get(i);
    if (content === undefined) return m;
    const { tokenEstimate: _stale, ...meta } = m.meta;
    return { ...m, content, meta };
  });
}

/** `forge-ts runs fork`: the new run's id and how to continue it. Resolves to the exit code. */
export async function forkMain(store: RunStore, runId: string, f: ForkFlags, workflow: Workflow | undefined): Promise<number> {
  if (f.at === undefined) throw new InvalidArgumentError("--at", `runs fork needs the commit to start from (see forge-ts runs show ${runId} --history)`);
  const at = Number(f.at);
  if (!Number.isSafeInteger(at) || at < 1) throw new InvalidArgumentError("--at", `expected a commit's seq (a positive integer), got "${f.at}"`);
  const fork = await forkRun(store, runId, { at, patch: patchFromFlags(f), ...(f["run-id"] !== undefined ? { runId: f["run-id"] } : {}), ...(workflow ? { workflow } : {}) });
  if (f.json) return console.log(JSON.stringify(fork, null, 2)), 0;
  console.log(`run ${fork.runId}`);
  const waits = fork.status === "waiting" ? `; it waits for a person (${cliCommand()} runs show ${shellWord(fork.runId)}${storeFlag(f)})` : "";
  console.log(`forked from run ${runId} at commit ${at} (${fork.state})${waits}; continue with: ${resumeCommand(fork.runId, f)}`);
  return 0;
}
