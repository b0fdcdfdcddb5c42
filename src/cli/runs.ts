/**
 * `forge-ts run` and `forge-ts runs`: durable runs from the command line, on a run store (a
 * directory, or a libSQL URL: see store.ts).
 *
 *   forge-ts run <workflow-module> "<message>" --backend ollama --model qwen3:8b [--session id]
 *   forge-ts runs list | show <runId> | resume <runId> [--workflow <module> --backend ...] | delete <runId>
 *   (resume, retry and replay default to the module, backend and model the run recorded: run-launch.ts)
 *   forge-ts runs approve|reject|answer <runId> [callId] ...   (runs-decide.ts)
 *   forge-ts runs fork <runId> --at <seq> ...                  (runs-fork.ts)
 *
 * A workflow module (workflow-module.ts) may take the tools of the MCP servers named by `--mcp`,
 * `--mcp-url` and `--mcp-config`; the servers are closed when the command ends.
 */
import { ForgeError, InvalidArgumentError, type PendingHumanRequest, type RunWaitingError } from "../core/errors.js";
import { assertRunId, type RunStore } from "../persistence/run-store.js";
import { replayRun } from "../runner/replay.js";
import { redactionMapOf } from "../telemetry/redact-run.js";
import type { LoadedWorkflow } from "../cli-kit/backends.js";
import { INTERRUPTED_EXIT, interruptedLines, onInterrupt } from "../cli-kit/interrupt.js";
import { parseCliArgs } from "./parse-cli-args.js";
import { backendSettings, runnerFor, storeOf } from "./run-runner.js";
import { launchOf, recordedLaunch, withLaunch } from "./run-launch.js";
import { runPromptVars } from "./prompt-vars.js";
import { resumeCommand, type HintFlags } from "../cli-kit/resume-command.js";
import { DECIDE_COMMANDS, decideMain, waitingLines, type DecideCommand } from "./runs-decide.js";
import { forkMain } from "./runs-fork.js";
import { factoryOf, importModule, loadWorkflowModule } from "./workflow-module.js";
import { deleteMain, listMain } from "./runs-list.js";
import { showMain } from "./runs-show.js";

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
  --api-key <key>        the backend's key (else OPENAI_API_KEY for openai, ANTHROPIC_API_KEY
                         for anthropic; none for local servers)
  --timeout <ms>         per backend request, default 300000                    [FORGE_TIMEOUT]
  --budget <tokens>      context budget in tokens, default 8192                  [FORGE_BUDGET]
  --max-iterations <n>   model calls per run, default 10
  --recommended-sampling
                         the model card's sampling values (ollama, llamaserver, llamafile;
                         an unknown model is refused)
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
  --var <name>=<value>   the value of the system prompt's {name} placeholder (repeatable;
                         a name the prompt has no placeholder for is refused)
  --vars <file.json>     placeholder values from a JSON object of strings ({"team": "ops"});
                         --var wins; names the prompt does not use are ignored
${BACKEND_FLAGS}
  -h, --help

A system-prompt placeholder without a value is refused (exit 2) before the run starts; a turn
continuing a --session's conversation takes the prompt its first turn filled, so it needs (and
takes) no --var. The run records its module (as an absolute path), backend and model: the
commands that continue it need none of them.

Prints the run id first, then the result as JSON; a run that needs a person (a tool with
needsApproval, a human-input tool) stops waiting: its pending requests are printed with the
commands that decide them ("forge-ts runs approve|reject|answer") and continue it
("forge-ts runs resume"). Exit codes: 0 done or waiting, 1 the run failed or the backend is
unreachable, 2 bad flags.`;

export const RUNS_HELP = `Usage: forge-ts runs <list|show|resume|retry|replay|delete|approve|reject|answer|fork> [options]

  forge-ts runs list [--session <id>] [--status <s>] [--redis <url>] [--json]
                                                       runs in the store, oldest first; --status
                                                       active | waiting | done | failed | cancelled
                                                       | damaged (a run whose stored record cannot
                                                       be read: listed with where, file:line or
                                                       table/run@seq; runs delete removes it);
                                                       --redis <url>: each run's queue job and its
                                                       progress (state, iteration)
  forge-ts runs show <runId> [--events] [--history] [--json]
                                                       a run's latest checkpoint, its pending requests
                                                       when it waits for a person (and its event log;
                                                       --history: every commit's seq and state)
  forge-ts runs resume <runId> [--workflow <module>] [--backend <name>] [--model <name>]
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
  forge-ts runs retry <runId> [--workflow <module>] [--backend <name>] [--model <name>]
                                                       run a failed or cancelled run again from its
                                                       last state before it ended
  forge-ts runs replay <runId> [--workflow <module>]    re-drive the statechart from the run's event log
                                                       (no model, no tools): its states and result
  forge-ts runs delete <runId>                         remove a run (refused while it is locked)

  --store <dir|url>      run store: a directory (default ./.forge), a libSQL URL or postgres://…  [FORGE_STORE]
${BACKEND_FLAGS}
  -h, --help

resume, retry and replay default --workflow, --backend, --model, --base-url, --mode, --think and
--recommended-sampling to what "forge-ts run" (or the demo) recorded when it started the run (a
fork: the run it was forked from); a flag given wins, and the backend's settings are taken only
with the recorded backend. Runs recorded before forge-ts kept this need the flags, and MCP
servers are never recorded: give --mcp, --mcp-url, --mcp-config again. No --var:
a run's system prompt was filled when it started, and resume and retry continue from its stored
messages.

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
  "recommended-sampling": { type: "boolean" },
  var: { type: "string", multiple: true },
  vars: { type: "string" },
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
  const runId = values["run-id"] ?? globalThis.crypto.randomUUID();
  assertRunId(runId); // before the id is printed
  const { store, label } = await storeOf(values);
  const { close, ...module } = await openWorkflow(values, modulePath);
  const interrupt = onInterrupt();
  try {
    // Checked before the run id is printed: a run refused for its flags leaves nothing behind.
    const promptVars = await runPromptVars(values, module.workflow, modulePath, store);
    if (values["run-id"] !== undefined && (await store.latest(runId))) {
      const existing = { ...(values.store !== undefined ? { store: label } : {}), launch: await recordedLaunch(store, runId) };
      throw new InvalidArgumentError("--run-id", `run ${runId} already exists in ${label}: continue it with ${resumeCommand(runId, existing)}, or choose another id`);
    }
    const runner = await runnerFor(values, module, store);
    if (typeof runner === "string") return console.error(runner), 1;
    const { backend, flags } = backendSettings(values);
    const launch = launchOf(modulePath, backend!, flags);
    const hints: HintFlags = { ...values, workflow: modulePath, ...(values.store !== undefined ? { store: label } : {}), launch };
    console.log(`run ${runId}`);
    try {
      const options = { runId, signal: interrupt.signal, launch, ...(promptVars ? { promptVars } : {}), ...(values.session ? { sessionId: values.session } : {}) };
      const outcome = await runner.start(module.workflow, message, options);
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

/** `forge-ts runs`. Resolves to the exit code. */
export async function runsMain(args: readonly string[]): Promise<number> {
  const { values, positionals } = parse(args);
  const [sub, runId, ...extra] = positionals;
  if (values.help) return console.log(RUNS_HELP), 0;
  if (sub === undefined) return console.error(RUNS_HELP), 2;
  const decide = (DECIDE_COMMANDS as readonly string[]).includes(sub) ? (sub as DecideCommand) : undefined;
  // approve|reject|answer take the call id after the run id.
  const callId = decide ? extra.shift() : undefined;
  if (extra.length > 0) throw new InvalidArgumentError("arguments", `unexpected ${extra.join(" ")} (see forge-ts runs --help)`);
  if (values.var || values.vars !== undefined) {
    throw new InvalidArgumentError(values.var ? "--var" : "--vars", "only forge-ts run takes prompt variables: a run's system prompt was filled when it started, and resume and retry continue from its stored messages");
  }
  const { store, label } = await storeOf(values);
  if (sub === "list") return listMain(store, label, values);
  if (!SUBCOMMANDS.includes(sub)) throw new InvalidArgumentError("runs", `unknown subcommand "${sub}"; use ${SUBCOMMANDS.join(", ")}`);
  if (!runId) throw new InvalidArgumentError("runId", `forge-ts runs ${sub} needs a run id (see forge-ts runs list)`);
  // Before reading the run: a run whose records cannot be read is deleted too.
  if (sub === "delete") return deleteMain(store, runId, label);
  const checkpoint = await store.latest(runId);
  if (!checkpoint) throw new InvalidArgumentError("runId", `no run ${runId} in ${label} (see forge-ts runs list)`);
  const launch = await recordedLaunch(store, runId);
  const hints: HintFlags = { ...values, ...(values.store !== undefined ? { store: label } : {}), ...(launch ? { launch } : {}) };
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
  // The run's recorded launch fills the flags not given (run-launch.ts).
  const flags = withLaunch(values, launch);
  if (!flags.workflow) {
    throw new InvalidArgumentError("--workflow", `${sub} needs the module that exports the run's workflow: run ${runId} records none (started before forge-ts recorded it, or not by forge-ts run)`);
  }
  const { close, ...module } = await openWorkflow(flags, flags.workflow);
  try {
    return await continueRun(sub, runId, module, store, flags, hints);
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
  const runner = await runnerFor(values, module, store);
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
