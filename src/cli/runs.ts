/**
 * `forge-ts run` and `forge-ts runs`: durable runs from the command line, on a run store (a
 * directory, or a libSQL URL: see store.ts).
 *
 *   forge-ts run <workflow-module> "<message>" --backend ollama --model qwen3:8b [--session id]
 *   forge-ts runs list | show <runId> | resume <runId> --workflow <module> --backend ... | delete <runId>
 *   forge-ts runs approve|reject|answer <runId> [callId] ...   (runs-decide.ts)
 *   forge-ts runs fork <runId> --at <seq> ...                  (runs-fork.ts)
 *
 * A workflow module (workflow-module.ts) may take the tools of the MCP servers named by `--mcp`,
 * `--mcp-url` and `--mcp-config`; the servers are closed when the command ends.
 */
import { ForgeError, InvalidArgumentError, type PendingHumanRequest, type RunWaitingError } from "../core/errors.js";
import type { RunInfo, RunStore } from "../persistence/run-store.js";
import { replayRun } from "../runner/replay.js";
import { redactionMapOf } from "../telemetry/redact-run.js";
import type { LoadedWorkflow } from "../cli-kit/backends.js";
import { INTERRUPTED_EXIT, interruptedLines, onInterrupt } from "../cli-kit/interrupt.js";
import { parseCliArgs } from "./parse-cli-args.js";
import { runnerFor, storeOf } from "./run-runner.js";
import type { HintFlags } from "../cli-kit/resume-command.js";
import { DECIDE_COMMANDS, decideMain, waitingLines, type DecideCommand } from "./runs-decide.js";
import { forkMain } from "./runs-fork.js";
import { factoryOf, importModule, loadWorkflowModule } from "./workflow-module.js";
import { runTable, showMain } from "./runs-show.js";

const BACKEND_FLAGS = `Backend:
  --backend <name>       sim | ollama | llamaserver | llamafile | openai | anthropic [FORGE_BACKEND]
                         (sim plays the Oracle the workflow module exports as "oracle",
                         else a schema-driven one: required steps in order, then the
                         terminal tool, arguments from each tool's schema)
  --model <name>         backend model (Ollama tag, served name, Claude model id); for sim:
                         clean (default) | small-model | chaotic                 [FORGE_MODEL]
  --base-url <url>       backend URL (default per backend)                       [FORGE_BASE_URL]
  --mode <mode>          llamaserver/llamafile: native | prompt | auto           [FORGE_MODE]
  --think <bool>         thinking on/off for models that support it             [FORGE_THINK]
  --api-key <key>        backend credential (else OPENAI_API_KEY / ANTHROPIC_API_KEY)
  --timeout <ms>         per backend request, default 300000                    [FORGE_TIMEOUT]
  --budget <tokens>      context budget in tokens, default 8192                  [FORGE_BUDGET]
  --max-iterations <n>   model calls per run, default 10
MCP servers (their tools go to the module's createWorkflow({ mcpTools, mcpServers })):
  --mcp "<command …>"    a stdio MCP server to spawn (repeatable; named mcp-1, mcp-2, …)
  --mcp-url <url>        a Streamable HTTP MCP server (repeatable; named mcp-url-1, …)
  --mcp-config <file>    servers from a { "mcpServers": { "<name>": { "command", "args", "env" } | { "url", "headers" } } } file`;

export const RUN_HELP = `Usage: forge-ts run <workflow-module> "<message>" --backend <name> --model <name> [options]

Runs a workflow exported by <workflow-module> (its default export, "workflow", or its only
Workflow; or the one its createWorkflow({ mcpTools, mcpServers }) returns, given the tools of
the --mcp servers) with every step checkpointed in the store: after a crash, "forge-ts runs
resume" continues it without re-running a finished tool.

  --store <dir|url>      run store: a directory (default ./.forge), a libSQL URL or postgres://…  [FORGE_STORE]
  --session <id>         continue this session's conversation (one run per turn)
  --run-id <id>          name the run (default: a random UUID)
${BACKEND_FLAGS}
  -h, --help

Prints the run id first, then the result as JSON; a run that needs a person (a tool with
needsApproval, a human-input tool) stops waiting: its pending requests are printed with the
commands that decide them ("forge-ts runs approve|reject|answer") and continue it
("forge-ts runs resume"). Exit codes: 0 done or waiting, 1 the run failed or the backend is
unreachable, 2 bad flags.`;

export const RUNS_HELP = `Usage: forge-ts runs <list|show|resume|retry|replay|delete|approve|reject|answer|fork> [options]

  forge-ts runs list [--session <id>] [--status <s>] [--redis <url>] [--json]
                                                       runs in the store, oldest first; --status
                                                       active | waiting | done | failed | cancelled;
                                                       --redis <url>: each run's queue job and its
                                                       progress (state, iteration)
  forge-ts runs show <runId> [--events] [--history] [--json]
                                                       a run's latest checkpoint, its pending requests
                                                       when it waits for a person (and its event log;
                                                       --history: every commit's seq and state)
  forge-ts runs resume <runId> --workflow <module> --backend <name> --model <name>
                                                       continue a run from its latest checkpoint (a
                                                       waiting run takes the decisions recorded since,
                                                       or still waits: exit 0)
  forge-ts runs approve <runId> [callId] [--args <json>]
  forge-ts runs reject <runId> [callId] --reason <text>
  forge-ts runs answer <runId> [callId] --answer <text|json>
                                                       decide a waiting run's request (callId may be
                                                       left out when one is pending); --args: approve
                                                       with edited arguments; --answer: a JSON value
                                                       when it parses, else the text; --redis <url>:
                                                       a queued run goes back in the queue once
                                                       nothing is pending
  forge-ts runs fork <runId> --at <seq> [--patch-message <index>=<text>]... [--patch-args <callId>=<json>]...
                    [--run-id <id>] [--workflow <module>]
                                                       a new run starting from commit <seq> (see
                                                       --history), the parent unchanged; --workflow
                                                       checks the fork (and edited args) against it
  forge-ts runs retry <runId> --workflow <module> --backend <name> --model <name>
                                                       run a failed or cancelled run again from its
                                                       last state before it ended
  forge-ts runs replay <runId> --workflow <module>      re-drive the statechart from the run's event log
                                                       (no model, no tools): its states and result
  forge-ts runs delete <runId>                         remove a run (refused while it is locked)

  --store <dir|url>      run store: a directory (default ./.forge), a libSQL URL or postgres://…  [FORGE_STORE]
${BACKEND_FLAGS}
  -h, --help

Exit codes: 0 done (or waiting for a person), 1 a run failed or the store could not be read, 2 bad
flags, an unknown run, or a decision the run refuses.`;

const OPTIONS = {
  store: { type: "string" },
  session: { type: "string" },
  status: { type: "string" },
  redis: { type: "string" },
  "run-id": { type: "string" },
  workflow: { type: "string" },
  events: { type: "boolean", default: false },
  history: { type: "boolean", default: false },
  args: { type: "string" },
  reason: { type: "string" },
  answer: { type: "string" },
  at: { type: "string" },
  "patch-message": { type: "string", multiple: true },
  "patch-args": { type: "string", multiple: true },
  json: { type: "boolean", default: false },
  backend: { type: "string" },
  model: { type: "string" },
  "base-url": { type: "string" },
  mode: { type: "string" },
  think: { type: "string" },
  "api-key": { type: "string" },
  timeout: { type: "string" },
  budget: { type: "string" },
  "max-iterations": { type: "string" },
  mcp: { type: "string", multiple: true },
  "mcp-url": { type: "string", multiple: true },
  "mcp-config": { type: "string" },
  help: { type: "boolean", short: "h", default: false },
} as const;

type Values = ReturnType<typeof parse>["values"];

function parse(args: readonly string[]) {
  return parseCliArgs({ args, options: OPTIONS, allowPositionals: true });
}

/**
 * A module's Workflow with the MCP servers its flags name connected (and closed by `close()`,
 * which the caller awaits when the command is done).
 */
async function openWorkflow(values: Values, modulePath: string): Promise<LoadedWorkflow & { close: () => Promise<void> }> {
  const wanted = (values.mcp?.length ?? 0) + (values["mcp-url"]?.length ?? 0) > 0 || values["mcp-config"] !== undefined;
  if (!wanted) return { ...(await loadWorkflowModule(modulePath)), close: async () => undefined };
  // The module first: no server is started for a module that cannot take its tools.
  factoryOf(await importModule(modulePath), modulePath, true);
  // Only now: the MCP SDK is an optional peer (without it this import fails with one line naming it).
  const { connectFromFlags } = await import("../mcp/cli-servers.js");
  const servers = await connectFromFlags({ mcp: values.mcp, mcpUrl: values["mcp-url"], mcpConfig: values["mcp-config"] });
  try {
    return { ...(await loadWorkflowModule(modulePath, servers)), close: () => servers.close() };
  } catch (error) {
    await servers.close();
    throw error;
  }
}

/** `forge-ts run`. Resolves to the exit code. */
export async function runMain(args: readonly string[]): Promise<number> {
  const { values, positionals } = parse(args);
  if (values.help) return console.log(RUN_HELP), 0;
  const [modulePath, message, ...extra] = positionals;
  if (!modulePath || message === undefined || extra.length > 0) throw new InvalidArgumentError("arguments", 'expected <workflow-module> "<message>" (see forge-ts run --help)');
  const { close, ...module } = await openWorkflow(values, modulePath);
  const interrupt = onInterrupt();
  try {
    let label: string | undefined;
    const runner = await runnerFor(values, module, (l) => (label = l));
    if (typeof runner === "string") return console.error(runner), 1;
    const hints: HintFlags = { ...values, workflow: modulePath, ...(values.store !== undefined ? { store: label } : {}) };
    const runId = values["run-id"] ?? globalThis.crypto.randomUUID();
    console.log(`run ${runId}`);
    try {
      const outcome = await runner.start(module.workflow, message, { runId, signal: interrupt.signal, ...(values.session ? { sessionId: values.session } : {}) });
      if (outcome.status === "waiting") return console.log(waitingLines(runId, outcome.requests, hints, redactionMapOf(module.workflow.tools)).join("\n")), 0;
      console.log(JSON.stringify(outcome.result, null, 2));
      return 0;
    } catch (error) {
      if (!interrupt.interrupted) throw error;
      return console.error(interruptedLines(runId, hints).join("\n")), INTERRUPTED_EXIT;
    }
  } finally {
    interrupt.dispose();
    await close();
  }
}

const RUN_STATUSES = ["active", "waiting", "done", "failed", "cancelled"];

/** Each run with its queue job, when it has one: BullMQ's state and the progress its worker published. */
async function withJobs(redis: string, runs: RunInfo[]): Promise<(RunInfo & { job?: string })[]> {
  const { createRunQueue } = await import("../queue/run-queue.js");
  const queue = createRunQueue({ redis });
  try {
    const out: (RunInfo & { job?: string })[] = [];
    for (const run of runs) {
      const job = await queue.job(run.workflow, run.runId);
      const p = job?.progress as { state?: unknown; iteration?: unknown } | undefined;
      const progress = p && typeof p.state === "string" ? ` (${p.state}, iteration ${String(p.iteration)})` : "";
      out.push(job ? { ...run, job: `${job.state}${progress}` } : run);
    }
    return out;
  } finally {
    await queue.close();
  }
}

/** `forge-ts runs`. Resolves to the exit code. */
export async function runsMain(args: readonly string[]): Promise<number> {
  const { values, positionals } = parse(args);
  const [sub, runId, ...extra] = positionals;
  if (values.help || sub === undefined) return console.log(RUNS_HELP), values.help ? 0 : 2;
  const decide = (DECIDE_COMMANDS as readonly string[]).includes(sub) ? (sub as DecideCommand) : undefined;
  // approve|reject|answer take the call id after the run id.
  const callId = decide ? extra.shift() : undefined;
  if (extra.length > 0) throw new InvalidArgumentError("arguments", `unexpected ${extra.join(" ")} (see forge-ts runs --help)`);
  const { store, label } = await storeOf(values);
  if (sub === "list") {
    const status = values.status;
    if (status !== undefined && !RUN_STATUSES.includes(status)) {
      throw new InvalidArgumentError("--status", `expected one of ${RUN_STATUSES.join(", ")}, got ${JSON.stringify(status)}`);
    }
    // active: not final (running, or left by a runner that died); waiting: for a person; the others name the final state.
    const runs = (await store.listRuns(values.session ? { sessionId: values.session } : {})).filter(
      (r) => status === undefined || (status === "active" || status === "waiting" ? r.status === status : r.state === status),
    );
    const listed = values.redis ? await withJobs(values.redis, runs) : runs;
    console.log(values.json ? JSON.stringify(listed, null, 2) : listed.length > 0 ? runTable(listed) : `no runs in ${label}`);
    return 0;
  }
  if (!SUBCOMMANDS.includes(sub)) throw new InvalidArgumentError("runs", `unknown subcommand "${sub}"; use ${SUBCOMMANDS.join(", ")}`);
  if (!runId) throw new InvalidArgumentError("runId", `forge-ts runs ${sub} needs a run id (see forge-ts runs list)`);
  const checkpoint = await store.latest(runId);
  if (!checkpoint) throw new InvalidArgumentError("runId", `no run ${runId} in ${label} (see forge-ts runs list)`);
  const hints: HintFlags = { ...values, ...(values.store !== undefined ? { store: label } : {}) };
  if (decide) return decideMain(decide, store, runId, callId, hints);
  if (sub === "fork") {
    if (!values.workflow) return forkMain(store, runId, hints, undefined);
    const { workflow, close } = await openWorkflow(values, values.workflow);
    try {
      return await forkMain(store, runId, hints, workflow);
    } finally {
      await close();
    }
  }
  if (sub === "show") return showMain(store, checkpoint, values, hints);
  if (sub === "delete") {
    await store.deleteRun(runId);
    console.log(`deleted run ${runId}`);
    return 0;
  }
  if (!values.workflow) throw new InvalidArgumentError("--workflow", `${sub} needs the module that exports the run's workflow`);
  const { close, ...module } = await openWorkflow(values, values.workflow);
  try {
    return await continueRun(sub, runId, module, store, values, hints);
  } finally {
    await close();
  }
}

/** `runs replay | resume | retry` of one run with its workflow. */
async function continueRun(sub: string, runId: string, module: LoadedWorkflow, store: RunStore, values: Values, hints: HintFlags): Promise<number> {
  const { workflow } = module;
  if (sub === "replay") {
    const forked = (await store.events(runId)).find((e) => e.type === "fork");
    if (forked?.type === "fork") {
      throw new InvalidArgumentError("runId", `run ${runId} is a fork of run ${forked.from.runId} at commit ${forked.from.seq}: its log starts from that state, not from a start; replay ${forked.from.runId}, or see forge-ts runs show ${runId} --history`);
    }
    const replay = await replayRun(store, runId, workflow);
    if (values.json) console.log(JSON.stringify({ states: replay.states, state: replay.state, result: replay.result, messages: replay.messages.length }, null, 2));
    else console.log(`${replay.states.join(" → ")}\nstate ${replay.state}${"result" in replay ? `, result ${JSON.stringify(replay.result)}` : ""}`);
    return 0;
  }
  const runner = await runnerFor(values, module);
  if (typeof runner === "string") return console.error(runner), 1;
  const waiting = (requests: readonly PendingHumanRequest[]) => (console.log(waitingLines(runId, requests, hints, redactionMapOf(workflow.tools)).join("\n")), 0);
  if (sub === "resume") {
    const outcome = await runner.proceed(runId, workflow);
    if (outcome.status === "waiting") return waiting(outcome.requests);
    console.log(JSON.stringify(outcome.result, null, 2));
    return 0;
  }
  try {
    console.log(JSON.stringify(await runner.retry(runId, workflow), null, 2));
  } catch (error) {
    // A retried run can come to a request for a person too: an outcome, not a failure.
    if (!ForgeError.isInstance(error) || error.code !== "FORGE_RUN_WAITING") throw error;
    return waiting((error as RunWaitingError).requests);
  }
  return 0;
}

const SUBCOMMANDS: readonly string[] = ["list", "show", "resume", "retry", "replay", "delete", ...DECIDE_COMMANDS, "fork"];
