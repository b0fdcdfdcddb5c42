/**
 * The EvalScenario contract: a deterministic workflow (fresh per run), the limits it runs
 * under, a correctness check on the terminal call, the oracle the simulated model plays and,
 * for scenarios with guarded tools, the person who decides what the model may do.
 */
import type { Workflow } from "../src/core/index.js";
import type { HumanDecision, HumanRequest } from "../src/loop/human.js";
import type { EvalFixture } from "./fixture.js";

/** What the simulated model sees of the run so far (mirrors src/clients/simulated.ts). */
export interface OracleView {
  results: { tool: string; args: Record<string, unknown>; content: string; isError: boolean; callId?: string }[];
  userInput: string;
  toolNames: string[];
  turn: number;
}

/** One move of the simulated model (mirrors src/clients/simulated.ts). */
export type OracleStep =
  | { tool: string; args: Record<string, unknown> }
  | { calls: { tool: string; args: Record<string, unknown> }[] }
  | { text: string };

export type Oracle = (view: OracleView) => OracleStep;

/**
 * A mistake of skill the simulated small model makes in one scenario: a lure taken, a value
 * not converted, an answer given before the data was read, a retry skipped after an error.
 * The client's fault profile covers plumbing mistakes (prose instead of a call, a call in
 * text, a missing argument) that guardrails catch; a slip is what a model gets wrong about
 * the task, so most slips end in a wrong answer whatever the guardrails, and some (a skipped
 * step, a premature answer) are exactly what a nudge recovers.
 *
 * Whether a slip happens is decided once per run (the run's seed), with probability `rate`
 * for the `small-model` profile (twice that for `chaotic`, never for `clean`). While it is
 * active, every turn where `when(view)` holds plays `step(view)` instead of the oracle: a
 * slip is a pure function of the view, so `when` turning false is how it ends.
 *
 * @example
 * { name: "takes_lure", rate: 0.3, when: (v) => !v.results.some((r) => r.tool === "get_archive"),
 *   step: () => ({ tool: "get_archive", args: { year: 2019 } }) }
 */
export interface Slip {
  name: string;
  /** Probability per run for the small-model profile, in [0, 1]. */
  rate: number;
  when: (view: OracleView) => boolean;
  step: (view: OracleView) => OracleStep;
}

/**
 * The person in the loop, an oracle too: what they decide about one approval or question
 * (the harness passes it to the runner as `onHumanRequest`). Pure, like an oracle.
 */
export type Person = (request: HumanRequest) => HumanDecision;

/** The terminal call a run ended with, plus the per-run state its tools mutated. */
export interface TerminalCall<TState = unknown> {
  tool: string;
  args: Record<string, unknown>;
  state: TState;
}

/** A fresh workflow for one run; stateful scenarios also hand back the state its tools mutate. */
export interface ScenarioInstance<TState = unknown> {
  workflow: Workflow;
  state: TState;
}

/**
 * @example
 * const s: EvalScenario = { name: "capital_lookup", tags: ["plumbing"], idealIterations: 2,
 *   maxIterations: 15, budgetTokens: 8192, userInput: "What is the capital of France?", description: "...",
 *   build: () => ({ workflow, state: undefined }), validate: ({ args }) => mentionsAll(args.content, ["paris"]),
 *   oracle: planOracle([...]), slips: [answersInProse] };
 */
export interface EvalScenario<TState = unknown> {
  name: string;
  description: string;
  tags: string[];
  userInput: string;
  /** LLM round trips on the shortest correct path (the oracle's path). */
  idealIterations: number;
  maxIterations: number;
  /** Context budget in tokens for this scenario's ContextManager. */
  budgetTokens: number;
  /**
   * The context window the backend is asked for on this scenario's runs (Ollama's num_ctx) in
   * budget mode "scenario"; default `budgetTokens`. Larger only when the scenario means the
   * window to exceed what its ContextManager may fill.
   */
  contextTokens?: number;
  build(): ScenarioInstance<TState>;
  validate(call: TerminalCall<TState>): boolean;
  oracle: Oracle;
  /** Skill mistakes the simulated model makes in this scenario (see Slip); none: only the profile's plumbing faults. */
  slips?: Slip[];
  /** Decides the run's approvals and questions; a scenario whose tools never ask a person has none. */
  person?: Person;
  /**
   * What `build` needs open (an MCP server): the harness holds it around every run, and a
   * batch holds it once for all its runs. Shared by the scenarios of a family.
   */
  fixture?: EvalFixture<unknown>;
}

/**
 * Erase the state type so scenarios of different states share one list.
 *
 * @example export const s = scenario<MyState>({ ... });
 */
export function scenario<TState>(s: EvalScenario<TState>): EvalScenario {
  return s as unknown as EvalScenario;
}
