/**
 * `npm start`: runs the supplier-quote workflow through the real statechart and prints every
 * state it enters (eventless steps included, from the actor's microsteps), every nudge, rescue
 * and tool result as it happens. Defaults to the embedded
 * simulated small model; `--backend` (or FORGE_BACKEND) points it at a real one.
 */
import { SimulatedClient } from "../clients/simulated.js";
import { ContextManager } from "../context/context-manager.js";
import { TieredCompact } from "../context/tiered-compact.js";
import { ForgeError, InvalidArgumentError } from "../core/errors.js";
import type { LLMClient, StreamChunk } from "../core/llm.js";
import type { Message } from "../core/messages.js";
import { splitReasoning } from "../parsing/index.js";
import { openStore, storeSpec } from "./store.js";
import { WorkflowRunner } from "../runner.js";
import type { InspectionSink } from "../runner/options.js";
import type { InspectionEvent } from "xstate";
import { connectVisualizer, DEFAULT_VISUALIZER_URL } from "../../visualizer/inspector.js";
import { assertBackend, backendLabel, backendOptionsFrom, buildClient, simProfile, unreachable } from "../cli-kit/backends.js";
import { DEMO_MODULE_PATH } from "./demo-module.js";
import { launchOf } from "./run-launch.js";
import { intFlag } from "../cli-kit/int-flag.js";
import { INTERRUPTED_EXIT, interruptedLines, onInterrupt } from "../cli-kit/interrupt.js";
import { parseCliArgs } from "./parse-cli-args.js";
import { demoApprover } from "./demo-approver.js";
import { DEMO_APPROVAL_ABOVE_USD, supplierQuoteWorkflow } from "./demo-workflow.js";
import { errorText, isMainModule, runCli } from "../cli-kit/run-cli.js";
import { redactionMapOf, redactMessage } from "../telemetry/redact-run.js";

/** Quotes whose total is above this need a person's approval (the demo's 250 × 0.34 = 85 USD does). */

const help = (command: string) => `Usage: ${command} [options]

Runs a multi-step supplier-quote workflow (lookup_part, get_public_pricing, check_inventory,
get_supplier_history, submit_quote) through forge-ts and prints what happens. A quote above
${DEMO_APPROVAL_ABOVE_USD} USD waits for a person's approval: the demo approves it and prints so.

  --backend <name>     sim (default) | ollama | llamaserver | llamafile | openai | anthropic  [FORGE_BACKEND]
  --model <name>       model name / Ollama tag; for sim: clean | small-model (default) | chaotic [FORGE_MODEL]
  --base-url <url>     backend URL (ollama http://127.0.0.1:11434, llama-server http://127.0.0.1:8080/v1) [FORGE_BASE_URL]
  --mode <mode>        llamaserver/llamafile: native | prompt | auto (default auto)           [FORGE_MODE]
  --think <bool>       thinking on/off for models that support it                           [FORGE_THINK]
  --api-key <key>      the backend's key (or OPENAI_API_KEY for openai, ANTHROPIC_API_KEY for
                       anthropic; none for local servers)
  --recommended-sampling
                       the model card's sampling values (ollama, llamaserver, llamafile; an
                       unknown model is refused)
  --seed <n>           simulated model seed (default 15)                                     [FORGE_SEED]
  --budget <tokens>    context budget (default: the backend's context length, else 8192)    [FORGE_BUDGET]
  --max-iterations <n> default 12
  --timeout <ms>       per backend request: headers wait and idle gap (default 300000)     [FORGE_TIMEOUT]
  --stream             stream tokens as they arrive (reasoning, text and call arguments on their own lines)
  --latency <ms>       sim: delay per model answer (default 0; 600 with --visualize)        [FORGE_LATENCY]
  --store <dir|url>    record the run in a run store (then replayable in the visualizer): a
                       directory, a libSQL URL or a postgres:// URL                          [FORGE_STORE]
  --visualize          stream the run to the visualizer (start it first: forge-ts visualize)
  --visualizer-url <url>
                       default http://127.0.0.1:4848                                         [FORGE_VISUALIZER_URL]
  --interactive        on a terminal, ask y/n for each approval instead of approving it
  --quiet              only print the result
  -h, --help

Prints every state the statechart enters (→ state), each message the run appends, rescues
and compactions, then the terminal tool's result. Ctrl-C stops the run; with --store it is
checkpointed and the command that continues it is printed. Exit codes: 0 done, 1 the workflow
failed or the backend is unreachable, 2 bad flags, 130 interrupted.`;

const color = process.stdout.isTTY && !process.env.NO_COLOR;
const paint = (code: number) => (s: string) => (color ? `\x1b[${code}m${s}\x1b[0m` : s);
const dim = paint(2);
const cyan = paint(36);
const yellow = paint(33);
const green = paint(32);
const red = paint(31);
const clip = (s: string, n = 160) => (s.length > n ? `${s.slice(0, n)}…` : s).replaceAll("\n", " ⏎ ");

function describe(m: Message): string {
  switch (m.meta.type) {
    case "text_response":
      return `${yellow("model  ")} text instead of a call: "${clip(m.content)}"`;
    case "retry_nudge":
      return `${yellow("nudge  ")} (${m.role}) ${clip(m.content)}`;
    case "step_nudge":
    case "prerequisite_nudge":
      return `${yellow("blocked")} ${clip(m.content)}`;
    case "reasoning":
      return `${dim("think  ")} ${dim(clip(m.content))}`;
    case "tool_call":
      return `${cyan("call   ")} ${(m.toolCalls ?? []).map((c) => `${c.name}(${clip(JSON.stringify(c.args), 100)})`).join(", ")}`;
    case "tool_result":
      return m.content.startsWith("[") ? `${red("error  ")} ${clip(m.content)}` : `${green("result ")} ${m.toolName}: ${clip(m.content)}`;
    default:
      return `${dim(m.meta.type)} ${clip(m.content)}`;
  }
}

/** Run the demo with command-line arguments; resolves to the process exit code. */
/** `command` names the demo in usage lines: `npm start --` in a checkout, `forge-ts demo` from the package. */
export async function demoMain(args: readonly string[], command = "npm start --"): Promise<number> {
  const env = process.env;
  const { values } = parseCliArgs({
    args: [...args],
    options: {
      backend: { type: "string", default: env.FORGE_BACKEND ?? "sim" },
      model: { type: "string", ...(env.FORGE_MODEL ? { default: env.FORGE_MODEL } : {}) },
      "base-url": { type: "string", ...(env.FORGE_BASE_URL ? { default: env.FORGE_BASE_URL } : {}) },
      mode: { type: "string", ...(env.FORGE_MODE ? { default: env.FORGE_MODE } : {}) },
      think: { type: "string", ...(env.FORGE_THINK ? { default: env.FORGE_THINK } : {}) },
      "api-key": { type: "string" },
      "recommended-sampling": { type: "boolean", default: false },
      seed: { type: "string", default: env.FORGE_SEED ?? "15" },
      budget: { type: "string", ...(env.FORGE_BUDGET ? { default: env.FORGE_BUDGET } : {}) },
      "max-iterations": { type: "string", default: "12" },
      timeout: { type: "string", ...(env.FORGE_TIMEOUT ? { default: env.FORGE_TIMEOUT } : {}) },
      stream: { type: "boolean", default: false },
      latency: { type: "string", ...(env.FORGE_LATENCY ? { default: env.FORGE_LATENCY } : {}) },
      store: { type: "string" },
      visualize: { type: "boolean", default: false },
      "visualizer-url": { type: "string", default: env.FORGE_VISUALIZER_URL || DEFAULT_VISUALIZER_URL },
      interactive: { type: "boolean", default: false },
      quiet: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) {
    console.log(help(command));
    return 0;
  }
  const backend = values.backend;
  assertBackend(backend);
  const int = (name: string, raw: string | undefined) => intFlag(name, raw, { min: 0 });
  const seed = int("seed", values.seed) ?? 15;
  const demo = supplierQuoteWorkflow({ approvalAboveUsd: DEMO_APPROVAL_ABOVE_USD });
  const model = backend === "sim" ? simProfile(values.model, "small-model") : values.model;
  if (!model) throw new InvalidArgumentError("--model", `backend ${backend} needs --model (or FORGE_MODEL)`);
  if (backend === "sim" && values["recommended-sampling"]) throw new InvalidArgumentError("--recommended-sampling", "the simulated model has no sampling to set; ollama, llamaserver and llamafile take it");

  const backendFlags = { model, baseUrl: values["base-url"], mode: values.mode, think: values.think, apiKey: values["api-key"], timeout: values.timeout, recommendedSampling: values["recommended-sampling"] };
  const backendOptions = backendOptionsFrom(backend, backendFlags);
  const latencyMs = int("latency", values.latency) ?? (values.visualize ? 600 : 0);
  if (values.latency !== undefined && backend !== "sim") throw new InvalidArgumentError("--latency", "only the simulated model (--backend sim) takes a latency");
  const client: LLMClient =
    backend === "sim"
      ? new SimulatedClient({ oracle: demo.oracle, workflow: demo.workflow, profile: model as ReturnType<typeof simProfile>, seed, usage: true, latencyMs })
      : buildClient(backendOptions);
  // Fail before the run, not after it: a visualizer that is not there would show nothing.
  const visualizer = values.visualize ? await connectVisualizer(values["visualizer-url"]) : undefined;
  const spec = storeSpec(values.store);
  const opened = spec !== undefined ? await openStore(spec) : undefined;
  const store = opened?.store;
  const problem = await unreachable(client, backendLabel(backendOptions));
  if (problem) {
    console.error(`${red("failed")}: ${problem} (start it, or pick another with --backend / FORGE_BACKEND)`);
    return 1;
  }
  const budgetTokens = int("budget", values.budget) ?? (await client.getContextLength()) ?? 8192;
  const quiet = values.quiet;
  let midLine = false;
  const say = (line: string) => {
    if (quiet) return;
    if (midLine) process.stdout.write("\n"), (midLine = false);
    console.log(line);
  };

  say(`forge-ts demo — ${demo.workflow.name} on ${backend === "sim" ? `the simulated model (profile ${model}, seed ${seed})` : `${backend}:${model}`}`);
  say(`${dim("budget")} ${budgetTokens} tokens, tiered compaction`);
  if (visualizer) say(`${dim("watch ")} ${values["visualizer-url"]}  (the simulated model answers after ${latencyMs} ms: --latency)`);
  // Asking needs a person at a terminal; piped or in CI the demo approves by itself, and says so.
  const interactive = values.interactive && process.stdin.isTTY === true;
  if (values.interactive && !interactive) say(`${dim("note   ")} --interactive needs a terminal on stdin; approvals are automatic`);
  say(`${dim("user   ")} ${demo.userInput}`);
  let rescues = 0;
  let lastState = "";
  // Every microstep's state, so eventless steps (validating → enforcingSteps → ...) print too.
  const printStates = (event: InspectionEvent) => {
    if (event.type !== "@xstate.microstep" || !("value" in event.snapshot)) return;
    const state = stateName((event.snapshot as { value: unknown }).value);
    if (state !== lastState) say(dim(`→ ${(lastState = state)}`));
  };
  const inspect: InspectionSink = visualizer
    ? { next: (event) => (printStates(event), visualizer.next(event)), chunk: visualizer.chunk, flush: visualizer.flush }
    : { next: printStates };
  const stream = streamPrinter((text) => {
    if (!quiet) process.stdout.write(text);
    midLine = !text.endsWith("\n");
  });
  const redaction = redactionMapOf(demo.workflow.tools);
  const runner = new WorkflowRunner({
    client,
    contextManager: new ContextManager({
      strategy: new TieredCompact({ keepRecent: 2 }),
      budgetTokens,
      onCompact: (e) => say(`${dim("compact")} phase ${e.phaseReached}: ${e.tokensBefore} → ${e.tokensAfter} tokens`),
    }),
    maxIterations: int("max-iterations", values["max-iterations"]) ?? 12,
    // The visualizer shows the text as it streams, so a visualized run streams.
    stream: values.stream || visualizer !== undefined,
    inspect,
    ...(store ? { store } : {}),
    onChunk: (chunk) => {
      if (chunk.type === "retry") say(`  ${yellow("retry  ")} stream re-requested: ${chunk.reason}`);
      else if (values.stream) stream(chunk);
    },
    onStateChange: (_state, ctx) => {
      if (ctx.stats.rescues > rescues) {
        rescues = ctx.stats.rescues;
        const raw = ctx.lastResponse?.type === "text" ? splitReasoning(ctx.lastResponse.content).content.trim() : "";
        say(`  ${green("rescue ")} ↳ the model wrote that call as text, recovered by the parser: "${clip(raw, 120)}"`);
      }
    },
    // A log line is a report: the tools' `redact` names are masked (the tool still got them).
    onMessage: (m) => say(`  ${describe(redactMessage(m, redaction))}`),
    onHumanRequest: demoApprover({ interactive, say, label: yellow("human  ") }),
  });
  const runId = `demo-${Date.now().toString(36)}`;
  // Recorded with the run: `runs retry|resume` of it need no --workflow, --backend or --model.
  const launch = launchOf(DEMO_MODULE_PATH, backend, backendFlags);
  const interrupt = onInterrupt();
  try {
    const result = await runner.run(demo.workflow, demo.userInput, { promptVars: demo.promptVars, runId, signal: interrupt.signal, launch });
    if (opened) say(`${dim("stored ")} run ${runId} in ${opened.label}`);
    const stats = runner.lastRunStats!;
    say(
      `${green("done")} in ${stats.iterations} model calls: ${stats.rescues} rescue(s), ${stats.retryNudges} retry nudge(s), ` +
        `${stats.stepNudges} step nudge(s), ${stats.prereqNudges} prerequisite nudge(s), ${stats.toolErrors} tool error(s)`,
    );
    console.log(typeof result === "string" ? result : JSON.stringify(result, null, 2));
    return 0;
  } catch (error) {
    if (interrupt.interrupted) {
      // The run recorded its module, backend and model (launch): the command needs only the store.
      console.error(interruptedLines(runId, opened && { store: opened.label, launch }).join("\n"));
      return INTERRUPTED_EXIT;
    }
    const stats = runner.lastRunStats;
    console.error(`${red("failed")}: ${errorText(error)}`);
    if (ForgeError.isInstance(error)) console.error(dim(JSON.stringify(error.data).slice(0, 500)));
    if (stats) console.error(dim(`after ${stats.iterations} model calls; completed: ${stats.completedSteps.join(", ") || "none"}`));
    return 1;
  } finally {
    interrupt.dispose();
  }
}

/** "executingTools.running" from a state value. */
function stateName(value: unknown): string {
  if (typeof value === "string") return value;
  if (value && typeof value === "object") {
    const [key, inner] = Object.entries(value)[0] ?? [];
    if (key !== undefined) return `${key}.${stateName(inner)}`;
  }
  return String(value);
}

/**
 * Stream deltas as labeled segments: reasoning, answer text and each call's arguments start
 * their own line, so they never run together.
 */
export function streamPrinter(write: (text: string) => void): (chunk: StreamChunk) => void {
  let segment = "";
  return (chunk) => {
    if (chunk.type !== "text_delta" && chunk.type !== "tool_call_delta") {
      if (segment !== "") write("\n");
      segment = "";
      return;
    }
    const label =
      chunk.type === "text_delta" ? (chunk.channel === "reasoning" ? "think " : "text  ") : `args #${chunk.index}${chunk.name ? ` ${chunk.name}` : ""}`;
    const key = chunk.type === "text_delta" ? (chunk.channel ?? "content") : `call${chunk.index}`;
    if (key !== segment) {
      write(`${segment === "" ? "" : "\n"}  ${dim(`stream ${label}`)} `);
      segment = key;
    }
    if (chunk.content !== "") write(dim(chunk.content));
  };
}

if (isMainModule(import.meta.url)) runCli(demoMain, process.argv.slice(2));
