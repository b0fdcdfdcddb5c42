/**
 * Run scenarios through the real WorkflowRunner and turn each run into a RunRecord. The
 * ablation only flips runner switches; everything measured comes from runner.lastRunStats.
 */
import { ForgeError, MessageRole, MessageType } from "../src/core/index.js";
import { ContextManager, NoCompact, SlidingWindowCompact, TieredCompact, type CompactStrategy } from "../src/context/index.js";
import { WorkflowRunner } from "../src/runner.js";
import type { InspectionSink } from "../src/runner/options.js";
import type { AblationConfig } from "./ablation.js";
import { assertAxes, axisTags, runBudget, runRequest, type RunAxes } from "./axes.js";
import type { BackendName, ClientFactory } from "./backends.js";
import { withFixtures } from "./fixture.js";
import { EVAL_GENERATION } from "./generation.js";
import { resumeKey, type RunRecord } from "./run-record.js";
import type { EvalScenario } from "./scenario.js";

export type CompactStrategyName = "tiered" | "sliding" | "none";

/** The axes (toolChoice, reasoningReplay, ...) are set only when chosen: see eval/axes.ts. */
export interface RunConfig extends RunAxes {
  backend: string;
  model: string;
  mode?: string;
  ablation: AblationConfig;
  compactStrategy: CompactStrategyName;
  stream: boolean;
  /** Set only when chosen: they change the backend's behaviour, so they are part of the config's name. */
  think?: boolean;
  baseUrl?: string;
  ggufPath?: string;
  /** Base seed; each (scenario, run index) derives its own, identical across configs. */
  seed: number;
  makeClient: ClientFactory;
  /** Every run's inspection events go here (e.g. visualizerInspector: watch a batch live). */
  inspect?: InspectionSink;
}

/**
 * The config's name, and so the resume key's first part: every field that changes behaviour
 * is in it (defaults are left out, so names stay short and old result files keep resuming).
 *
 * @example configName({ backend: "sim", model: "small-model", ablation: { name: "bare" }, compactStrategy: "tiered" }) // "sim:small-model@bare"
 * @example configName({ backend: "ollama", model: "qwen3:8b", ablation: { name: "reforged" }, compactStrategy: "tiered", stream: true, think: false }) // "ollama:qwen3:8b@reforged+stream+think=false"
 * @example configName({ backend: "sim", model: "small-model", ablation: { name: "bare" }, compactStrategy: "tiered", toolChoice: "any" }) // "sim:small-model@bare+any"
 */
export function configName(
  c: Pick<RunConfig, "backend" | "model" | "mode" | "compactStrategy" | "think" | "baseUrl" | "ggufPath" | keyof RunAxes> & { ablation: { name: string }; stream?: boolean | undefined },
): string {
  // The axes come first, right after the ablation, so labels read as forge's ("bare+any");
  // the older tags keep their order after them, so old result files still resume.
  const extras = [
    ...axisTags(c),
    c.compactStrategy === "tiered" ? "" : `+${c.compactStrategy}`,
    c.stream ? "+stream" : "",
    c.think === undefined ? "" : `+think=${c.think}`,
    c.baseUrl ? `+url=${c.baseUrl}` : "",
    c.ggufPath ? `+gguf=${c.ggufPath}` : "",
  ];
  return `${c.backend}:${c.model}${c.mode ? `:${c.mode}` : ""}@${c.ablation.name}${extras.join("")}`;
}

/** FNV-1a of `${seed}|${scenario}|${runIndex}`: same pair, same seed, whatever the config. */
export function runSeed(seed: number, scenario: string, runIndex: number): number {
  let h = 0x811c9dc5;
  for (const ch of `${seed}|${scenario}|${runIndex}`) {
    h ^= ch.charCodeAt(0);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/**
 * A run id naming the run's JSONL key (config, scenario, index) within what run ids allow, so
 * a visualizer lists eval runs by what they are; a long key keeps its end and a hash.
 */
export function evalRunId(config: RunConfig, scenario: string, runIndex: number): string {
  const key = resumeKey(configName(config), scenario, runIndex);
  const safe = key.replace(/[^A-Za-z0-9._-]+/g, "_").replace(/^[._-]+/, "");
  return safe.length <= 128 ? safe : `${safe.slice(-119)}-${runSeed(0, key, 0).toString(16).padStart(8, "0")}`;
}

/** The fields the axes' checks and request mapping read. */
function axesTarget(config: RunConfig): Parameters<typeof assertAxes>[0] {
  return { ...config, backend: config.backend as BackendName };
}

/**
 * Refuse a config whose axes are misspelt or that its backend cannot honour (eval/axes.ts):
 * runEval calls it before the first run; the CLIs and batch loading call it earlier still.
 *
 * @example assertRunConfig({ ...config, toolChoice: "any" }) // throws on backend ollama
 */
export function assertRunConfig(config: RunConfig): void {
  assertAxes(axesTarget(config));
}

function strategyFor(config: RunConfig): CompactStrategy {
  if (!config.ablation.compaction || config.compactStrategy === "none") return new NoCompact();
  return config.compactStrategy === "sliding" ? new SlidingWindowCompact({ keepRecent: 2 }) : new TieredCompact({ keepRecent: 2 });
}

/**
 * One run of one scenario. Model failures (every ForgeError) become data in the record;
 * anything else is a harness or tool-author bug and propagates. The scenario's fixture is held
 * for the run: opened here unless a plan or batch already holds it.
 *
 * @example const record = await runScenario(basic2step, config, 0);
 */
/** `signal`: Ctrl-C; the run is cancelled through the statechart (its record is then dropped by runEval). */
export async function runScenario(scenario: EvalScenario, config: RunConfig, runIndex: number, signal?: AbortSignal): Promise<RunRecord> {
  assertRunConfig(config);
  return withFixtures([scenario], () => playScenario(scenario, config, runIndex, signal));
}

async function playScenario(scenario: EvalScenario, config: RunConfig, runIndex: number, signal?: AbortSignal): Promise<RunRecord> {
  const seed = runSeed(config.seed, scenario.name, runIndex);
  const instance = scenario.build();
  const client = await config.makeClient({ scenario, instance, seed });
  const budget = await runBudget(scenario, config, client);
  const contextManager = new ContextManager({ strategy: strategyFor(config), budgetTokens: budget.budgetTokens });
  const request = runRequest(axesTarget(config), budget.contextTokens);
  const { ablation } = config;
  let reasoningMessages = 0;
  const runner = new WorkflowRunner({
    client,
    contextManager,
    maxIterations: scenario.maxIterations,
    maxRetries: ablation.maxRetries,
    maxToolErrors: ablation.maxToolErrors,
    rescueEnabled: ablation.rescueEnabled,
    stepEnforcement: ablation.stepEnforcement,
    stream: config.stream,
    ...(config.reasoningReplay ? { reasoningReplay: config.reasoningReplay } : {}),
    ...(request ? { request } : {}),
    // The scenario's person answers in-process: a run never parks waiting for one.
    ...(scenario.person ? { onHumanRequest: scenario.person } : {}),
    ...(config.inspect ? { inspect: config.inspect } : {}),
    onMessage: (message) => {
      if (message.role === MessageRole.ASSISTANT && message.meta.type === MessageType.REASONING) reasoningMessages++;
    },
  });
  const started = performance.now();
  let thrown: ForgeError | undefined;
  try {
    await runner.run(instance.workflow, scenario.userInput, { runId: evalRunId(config, scenario.name, runIndex), ...(signal ? { signal } : {}) });
  } catch (error) {
    if (!ForgeError.isInstance(error)) throw error;
    thrown = error;
  }
  const elapsedMs = performance.now() - started;
  const stats = runner.lastRunStats;
  if (!stats) throw new Error(`runner settled without lastRunStats (${scenario.name} run ${runIndex})`);
  const completed = stats.outcome === "done" && stats.terminal !== undefined;
  // A validator that throws gives no verdict: the run counts as attempted, not validated.
  let validationError: string | undefined;
  let correct = false;
  if (completed) {
    try {
      correct = scenario.validate({ tool: stats.terminal!.tool, args: stats.terminal!.args, state: instance.state });
    } catch (cause) {
      validationError = (cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause)).slice(0, 300);
    }
  }
  const error = stats.error ?? (thrown ? { name: thrown.name, message: thrown.message } : undefined);
  const sim = client as { injected?: unknown; streamRetries?: unknown };
  const name = configName(config);
  return {
    key: resumeKey(name, scenario.name, runIndex),
    config: name,
    backend: config.backend,
    model: config.model,
    ...(config.mode ? { mode: config.mode } : {}),
    ablation: ablation.name,
    scenario: scenario.name,
    tags: scenario.tags,
    runIndex,
    seed,
    generation: EVAL_GENERATION,
    completed,
    correct,
    ...(validationError !== undefined ? { validationError } : {}),
    iterations: stats.iterations,
    idealIterations: scenario.idealIterations,
    wastedCalls: Math.max(0, stats.iterations - scenario.idealIterations),
    elapsedMs: Math.round(elapsedMs * 10) / 10,
    compactions: stats.compactions.length,
    compactionPhases: stats.compactions.map((c) => c.phase),
    streamRetries: typeof sim.streamRetries === "number" ? sim.streamRetries : 0,
    inputTokens: stats.usage.inputTokens,
    outputTokens: stats.usage.outputTokens,
    retryNudges: stats.retryNudges,
    stepNudges: stats.stepNudges,
    prereqNudges: stats.prereqNudges,
    rescues: stats.rescues,
    toolErrors: stats.toolErrors,
    reasoningMessages,
    ...(validationError !== undefined ? { errorType: "ValidationError", errorMessage: validationError } : {}),
    ...(!correct && validationError === undefined && error ? { errorType: error.name, errorMessage: error.message.slice(0, 300) } : {}),
    ...(!correct && validationError === undefined && !error ? { errorType: completed ? "ValidationFailed" : "Incomplete" } : {}),
    ...(Array.isArray(sim.injected) ? { injectedFaults: sim.injected.map(String) } : {}),
    timestamp: new Date().toISOString(),
    budgetTokens: budget.budgetTokens,
    ...(config.toolChoice === "any" ? { toolChoice: config.toolChoice } : {}),
    ...(config.reasoningReplay && config.reasoningReplay !== "none" ? { reasoningReplay: config.reasoningReplay } : {}),
    ...(config.reasoningEffort !== undefined ? { reasoningEffort: config.reasoningEffort } : {}),
  };
}

export interface EvalPlan {
  scenarios: EvalScenario[];
  runs: number;
  config: RunConfig;
  /** Keys already recorded (batch resume): those runs are skipped. */
  skip?: ReadonlySet<string>;
  onRecord?: (record: RunRecord) => void;
  /**
   * Aborted (Ctrl-C): the run in flight is cancelled and not recorded (it would count as a
   * failure of the model), and no further run starts; a batch resumes from its file.
   */
  signal?: AbortSignal;
}

/** Every (scenario, run index) of a plan, in order; the resume key of each. */
export function planKeys(plan: Pick<EvalPlan, "scenarios" | "runs" | "config">): { scenario: EvalScenario; runIndex: number; key: string }[] {
  const name = configName(plan.config);
  return plan.scenarios.flatMap((scenario) => Array.from({ length: plan.runs }, (_, runIndex) => ({ scenario, runIndex, key: resumeKey(name, scenario.name, runIndex) })));
}

/**
 * Run a plan sequentially (one model, one GPU: parallel runs would skew timings). The fixtures
 * of the runs to do are opened once for the whole plan and closed when it ends, however it ends.
 *
 * @example const records = await runEval({ scenarios: ALL_SCENARIOS, runs: 5, config });
 */
export async function runEval(plan: EvalPlan): Promise<RunRecord[]> {
  assertRunConfig(plan.config);
  const todo = planKeys(plan).filter(({ key }) => !plan.skip?.has(key));
  return withFixtures(
    todo.map((t) => t.scenario),
    async () => {
      const out: RunRecord[] = [];
      for (const { scenario, runIndex } of todo) {
        if (plan.signal?.aborted) break;
        const record = await runScenario(scenario, plan.config, runIndex, plan.signal);
        if (plan.signal?.aborted) break;
        out.push(record);
        plan.onRecord?.(record);
      }
      return out;
    },
  );
}
