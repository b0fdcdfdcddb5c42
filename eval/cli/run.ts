/**
 * `npm run eval -- --backend sim --runs 5 [--scenario a b] [--tags t] [--ablation bare] ...`
 * Runs the selected scenarios, shows progress, prints the table; `--out` also appends JSONL.
 */
import { InvalidArgumentError } from "../../src/core/index.js";
import { getAblation } from "../ablation.js";
import { withFixtures } from "../fixture.js";
import { backendLabel, unreachable } from "../../src/cli-kit/backends.js";
import { INTERRUPTED_EXIT, onInterrupt } from "../../src/cli-kit/interrupt.js";
import { isMainModule, runCli } from "../../src/cli-kit/run-cli.js";
import { assertBackend, clientFactory, type BackendOptions } from "../backends.js";
import { assertAxes, parseSampling, type AxisLabel, type RunAxes } from "../axes.js";
import { runEval, type CompactStrategyName } from "../harness.js";
import { createProgress } from "../progress.js";
import { probeLines } from "../probe.js";
import { buildReportData } from "../report/report-data.js";
import { renderTable } from "../report/table.js";
import { openResults } from "../run-record.js";
import { ALL_SCENARIOS, selectScenarios } from "../scenarios/index.js";
import { count, int, many, one, outFile, parseFlags } from "./args.js";

const SPEC = {
  backend: "one", model: "one", runs: "one", scenario: "many", tags: "many", ablation: "one", stream: "bool",
  think: "one", "compact-strategy": "one", seed: "one", probe: "bool", out: "one", "base-url": "one",
  mode: "one", gguf: "one", timeout: "one", list: "bool", help: "bool",
  "tool-choice": "one", "reasoning-replay": "one", "reasoning-effort": "one", sampling: "many", "recommended-sampling": "bool",
  "budget-mode": "one", "budget-tokens": "one",
} as const;

/** The flag of each config axis, for the refusals' wording. */
const AXIS_FLAGS: Record<keyof RunAxes, string> = {
  toolChoice: "--tool-choice", reasoningReplay: "--reasoning-replay", reasoningEffort: "--reasoning-effort", sampling: "--sampling",
  recommendedSampling: "--recommended-sampling", budgetMode: "--budget-mode", manualTokens: "--budget-tokens",
};
const axisFlag: AxisLabel = (field) => AXIS_FLAGS[field];

const help = (command: string) => `usage: ${command} [--backend sim|ollama|llamaserver|llamafile|openai|anthropic] [--model M]
  [--runs N] [--scenario a b ...] [--tags t ...] [--ablation reforged|no_rescue|no_nudge|no_steps|no_recovery|no_compact|bare]
  [--stream] [--think true|false] [--compact-strategy tiered|sliding|none] [--seed S] [--out results.jsonl]
  [--base-url URL] [--mode native|prompt|auto] [--gguf path] [--timeout ms] [--probe] [--list]
  [--tool-choice auto|any] [--reasoning-replay none|keep-last|full] [--reasoning-effort LEVEL]
  [--sampling key=value ...] [--recommended-sampling] [--budget-mode scenario|backend|manual] [--budget-tokens N]

  --tags      scenarios with any of these tags: ${scenarioTags().join(", ")}
              (--list shows every scenario with its tags)
  --probe     report the context budget the backend resolves to ("unreachable" if it does not answer)
  --timeout   per backend request: headers wait and idle gap, ms (default 300000)
  --out FILE  also append every run to a JSONL file (see eval:batch for resumable batches;
              eval:batch --progress shows how far a batch file is)
  --tool-choice any       force a tool call on every request (tool_choice "required"; Anthropic
                          "any"); not on ollama or prompt-injected modes (llamaserver needs --mode native)
  --reasoning-replay      how earlier reasoning is sent back to the model (default none)
  --reasoning-effort      low|medium|high|...: openai and llamaserver reasoning_effort (llamaserver
                          also as chat_template_kwargs), ollama think level, anthropic output_config.effort
  --sampling k=v ...      request fields in OpenAI names (temperature=0.6 top_k=20); numbers and
                          true/false are typed
  --recommended-sampling  the model card's values (src/models/sampling.ts); an unknown model is an error
  --budget-mode           each run's context budget: scenario (its own; Ollama's num_ctx set to match),
                          backend (what the backend reports), manual (--budget-tokens N); scenarios
                          tagged compaction keep their own in every mode

Each axis set to a non-default value is part of the config's name (e.g. @bare+any+effort=high).

A real backend is asked for its model list before the first run; if it does not answer the
command says so and exits 1. Ctrl-C cancels the run in flight (not recorded) and stops.
Exit codes: 0 done, 1 a run could not start or the backend is unreachable, 2 bad flags (an
unknown scenario, tag or ablation included), 130 interrupted.`;

/** Every tag a scenario carries, in suite order (families such as plumbing, human, stateful). */
function scenarioTags(): string[] {
  return [...new Set(ALL_SCENARIOS.flatMap((s) => s.tags))];
}

function parseBool(name: string, raw: string | undefined): boolean | undefined {
  if (raw === undefined) return undefined;
  if (raw !== "true" && raw !== "false") throw new InvalidArgumentError(`--${name}`, `expected true or false, got "${raw}"`);
  return raw === "true";
}

/** The config axes the flags set (unset flags are left out: the defaults, and the name without them). */
function axesFrom(p: ReturnType<typeof parseFlags>): RunAxes {
  const sampling = many(p, "sampling");
  const tokens = one(p, "budget-tokens");
  return {
    ...(one(p, "tool-choice") !== undefined ? { toolChoice: one(p, "tool-choice") as RunAxes["toolChoice"] } : {}),
    ...(one(p, "reasoning-replay") !== undefined ? { reasoningReplay: one(p, "reasoning-replay") as RunAxes["reasoningReplay"] } : {}),
    ...(one(p, "reasoning-effort") !== undefined ? { reasoningEffort: one(p, "reasoning-effort")! } : {}),
    ...(sampling.length > 0 ? { sampling: parseSampling(sampling) } : {}),
    ...(p.flags["recommended-sampling"] ? { recommendedSampling: true } : {}),
    ...(one(p, "budget-mode") !== undefined ? { budgetMode: one(p, "budget-mode") as RunAxes["budgetMode"] } : {}),
    ...(tokens !== undefined ? { manualTokens: count(p, "budget-tokens", 0) } : {}),
  };
}

/** `npm run eval --` in a checkout, `forge-ts eval` from the package: `command` names it in usage lines. */
export async function evalMain(argv: readonly string[], command = "npm run eval --"): Promise<number | void> {
  const p = parseFlags(argv, SPEC);
  if (p.flags.help) return void console.log(help(command));
  if (p.flags.list) {
    for (const s of ALL_SCENARIOS) console.log(`${s.name.padEnd(34)} ideal=${s.idealIterations} budget=${s.budgetTokens} [${s.tags.join(", ")}]`);
    return;
  }
  const backend = one(p, "backend") ?? "sim";
  assertBackend(backend);
  const model = one(p, "model") ?? (backend === "sim" ? "small-model" : undefined);
  if (!model) throw new InvalidArgumentError("--model", `backend ${backend} needs --model`);
  const strategy = (one(p, "compact-strategy") ?? "tiered") as CompactStrategyName;
  if (!["tiered", "sliding", "none"].includes(strategy)) throw new InvalidArgumentError("--compact-strategy", `use tiered, sliding or none, not "${strategy}"`);
  const think = parseBool("think", one(p, "think"));
  const mode = one(p, "mode");
  const timeoutMs = one(p, "timeout") === undefined ? undefined : count(p, "timeout", 0);
  const backendOptions: BackendOptions = {
    backend, model,
    ...(mode ? { mode } : {}),
    ...(think !== undefined ? { think } : {}),
    ...(one(p, "base-url") ? { baseUrl: one(p, "base-url")! } : {}),
    ...(one(p, "gguf") ? { ggufPath: one(p, "gguf")! } : {}),
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    ...(process.env.ANTHROPIC_API_KEY && backend === "anthropic" ? { apiKey: process.env.ANTHROPIC_API_KEY } : {}),
    ...(process.env.OPENAI_API_KEY && backend === "openai" ? { apiKey: process.env.OPENAI_API_KEY } : {}),
  };
  const axes = axesFrom(p);
  // Checked before any client is built: a typo or an impossible combination is a usage error.
  assertAxes({ ...backendOptions, ...axes }, axisFlag);
  const scenarios = selectScenarios({ names: many(p, "scenario"), tags: many(p, "tags") });
  const makeClient = clientFactory(backendOptions);

  const runs = count(p, "runs", 5);
  const ablation = getAblation(one(p, "ablation") ?? "reforged");
  const out = one(p, "out") === undefined ? undefined : outFile(one(p, "out")!);
  const first = scenarios[0] ?? ALL_SCENARIOS[0]!;
  // Held to the end: when the first scenario needs a fixture (an MCP server), the check and the runs share one opening.
  return withFixtures([first], async (): Promise<number | void> => {
    const client = await makeClient({ scenario: first, instance: first.build(), seed: 0 });
    const problem = await unreachable(client, backendLabel(backendOptions));
    if (p.flags.probe) {
      if (problem) {
        console.log(problem);
        return 1;
      }
      for (const line of await probeLines(backend, model, client, scenarios)) console.log(line);
      return;
    }
    if (problem) {
      console.error(problem);
      return 1;
    }
    const config = {
      backend, model, ...(mode ? { mode } : {}), ablation,
      compactStrategy: strategy, stream: Boolean(p.flags.stream), seed: int(p, "seed", 42), makeClient,
      ...(think !== undefined ? { think } : {}),
      ...(backendOptions.baseUrl ? { baseUrl: backendOptions.baseUrl } : {}),
      ...(backendOptions.ggufPath ? { ggufPath: backendOptions.ggufPath } : {}),
      ...axes,
    };
    const file = out ? openResults(out) : undefined;
    const progress = createProgress({ total: scenarios.length * runs });
    const interrupt = onInterrupt();
    const records = await runEval({
      scenarios, runs, config, signal: interrupt.signal,
      onRecord: (r) => {
        file?.append(r);
        progress.tick(r);
      },
    }).finally(() => interrupt.dispose());
    progress.done();
    if (interrupt.interrupted) {
      console.error(`interrupted after ${records.length} of ${scenarios.length * runs} run(s)${out ? `, appended to ${out}` : ""}; for a batch that resumes where it stopped, see ${command.includes("forge-ts") ? "forge-ts eval-batch" : "npm run eval:batch"} --help`);
      return INTERRUPTED_EXIT;
    }
    console.log(renderTable(buildReportData(records)));
  });
}

if (isMainModule(import.meta.url)) runCli(evalMain, process.argv.slice(2));
