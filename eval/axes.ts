/**
 * The config axes an eval row may set beside its ablation, as forge's leaderboard has them:
 * a forced tool call (`toolChoice: "any"`), how reasoning is replayed, a reasoning-effort level,
 * sampling fields, the model card's recommended sampling, and where each run's context budget
 * comes from. Each is named in the config (the resume key) only when set to a non-default value,
 * checked before the first run, and reaches the model as the runner's per-request defaults
 * (WorkflowRunnerOptions.request), which every client maps to its backend.
 */
import type { BackendName } from "../src/cli-kit/backends.js";
import { ANTHROPIC_BODY_FIELDS, OLLAMA_BODY_FIELDS } from "../src/clients/request-overrides.js";
import { InvalidArgumentError, type LLMClient, type RequestOverrides } from "../src/core/index.js";
import type { ReasoningReplay } from "../src/core/wire-messages.js";
import { resolveSampling, toWireSampling } from "../src/models/sampling.js";
import type { EvalScenario } from "./scenario.js";

export const TOOL_CHOICES = ["auto", "any"] as const;
export type ToolChoiceAxis = (typeof TOOL_CHOICES)[number];
export const REASONING_REPLAYS = ["none", "keep-last", "full"] as const satisfies readonly ReasoningReplay[];
/**
 * Where a run's context budget comes from: the scenario's own (`scenario`, the default), what
 * the backend reports (`backend`), or a given token count (`manual`). Scenarios tagged
 * `compaction` keep their own budget in every mode: their context pressure is what they test.
 */
export const BUDGET_MODES = ["scenario", "backend", "manual"] as const;
export type EvalBudgetMode = (typeof BUDGET_MODES)[number];
export type SamplingValue = number | string | boolean;

/** The axes as a row or the `eval` flags give them; unset means the default. */
export interface RunAxes {
  toolChoice?: ToolChoiceAxis;
  reasoningReplay?: ReasoningReplay;
  reasoningEffort?: string;
  /** Request body fields in OpenAI chat-completions names (temperature, top_p, top_k, ...). */
  sampling?: Record<string, SamplingValue>;
  recommendedSampling?: boolean;
  budgetMode?: EvalBudgetMode;
  /** The budget of `budgetMode: "manual"`. */
  manualTokens?: number;
}

/** What the checks need to know of the backend beside the axes. */
export interface AxesTarget extends RunAxes {
  backend: BackendName;
  model: string;
  mode?: string;
  think?: boolean;
  ggufPath?: string;
}

/**
 * The levels each backend takes for `reasoningEffort` (absent: it has none). OpenAI-compatible
 * servers and llama-server take OpenAI's `reasoning_effort` (llama-server also passes it to the
 * chat template as `chat_template_kwargs.reasoning_effort`, which templates such as gpt-oss
 * read); Ollama's `think` takes three levels; Anthropic's `output_config.effort` its own five.
 * The simulated model has no reasoning to tune, and llamafile's server renders no template kwargs.
 */
export const EFFORT_LEVELS: Partial<Record<BackendName, readonly string[]>> = {
  openai: ["none", "minimal", "low", "medium", "high", "xhigh"],
  llamaserver: ["none", "minimal", "low", "medium", "high", "xhigh"],
  ollama: ["low", "medium", "high"],
  anthropic: ["low", "medium", "high", "xhigh", "max"],
};

/** How the checks name an axis: a row field ("toolChoice") or, from `eval`, its flag ("--tool-choice"). */
export type AxisLabel = (field: keyof RunAxes) => string;
const asField: AxisLabel = (field) => field;

/**
 * The config-name tags of the axes that are set, in forge's label order (tool choice, replay,
 * effort) then ours; defaults give none, so names without these axes are unchanged.
 *
 * @example axisTags({ toolChoice: "any", reasoningReplay: "keep-last" }) // ["+any", "+replay=keep-last"]
 * @example axisTags({ sampling: { top_k: 20, temperature: 0.6 } }) // ["+sampling=temperature=0.6,top_k=20"]
 */
export function axisTags(c: RunAxes): string[] {
  const sampling = Object.entries(c.sampling ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const budget = c.budgetMode === "backend" ? "+budget=backend" : c.budgetMode === "manual" ? `+budget=manual:${c.manualTokens}` : "";
  return [
    c.toolChoice === "any" ? "+any" : "",
    c.reasoningReplay && c.reasoningReplay !== "none" ? `+replay=${c.reasoningReplay}` : "",
    c.reasoningEffort !== undefined ? `+effort=${c.reasoningEffort}` : "",
    sampling.length > 0 ? `+sampling=${sampling.map(([k, v]) => `${k}=${String(v)}`).join(",")}` : "",
    c.recommendedSampling ? "+recsampling" : "",
    budget,
  ].filter((tag) => tag !== "");
}

function oneOf<T extends string>(label: string, value: unknown, valid: readonly T[]): void {
  if (value !== undefined && !valid.includes(value as T)) throw new InvalidArgumentError(label, `use ${valid.join(", ")}, not ${JSON.stringify(value)}`);
}

/** Body fields a backend would drop (no equivalent), keyed by backend; others take any field. */
const BODY_FIELDS: Partial<Record<BackendName, ReadonlySet<string>>> = { ollama: OLLAMA_BODY_FIELDS, anthropic: ANTHROPIC_BODY_FIELDS };
/** Set by the client itself, or by another axis. */
const NOT_SAMPLING: Record<string, string> = {
  model: "the client sets it",
  messages: "the client sets it",
  stream: "use stream (--stream)",
  stream_options: "the client sets it",
  tools: "the client sets it",
  tool_choice: "use toolChoice (--tool-choice)",
  reasoning_effort: "use reasoningEffort (--reasoning-effort), which each backend gets in its own form",
  options: "a scalar cannot be Ollama's options object",
  response_format: "a scalar cannot be a response format",
};

/**
 * Refuse, before any run, an axis value that is misspelt or that the backend cannot honour
 * (no silent fallback: a row that claims `+any` must have forced every call). With
 * `recommendedSampling`, a model the registry does not know fails with the registry's own
 * UnsupportedModelError.
 *
 * @example assertAxes({ backend: "ollama", model: "qwen3:8b", toolChoice: "any" }) // throws: Ollama has no tool_choice
 */
export function assertAxes(t: AxesTarget, label: AxisLabel = asField): void {
  const { backend } = t;
  oneOf(label("toolChoice"), t.toolChoice, TOOL_CHOICES);
  oneOf(label("reasoningReplay"), t.reasoningReplay, REASONING_REPLAYS);
  oneOf(label("budgetMode"), t.budgetMode, BUDGET_MODES);
  if (t.toolChoice === "any") {
    if (backend === "ollama") throw new InvalidArgumentError(label("toolChoice"), `"any" cannot be sent to backend ollama: Ollama's /api/chat has no tool_choice field`);
    if ((backend === "llamaserver" || backend === "llamafile") && t.mode !== "native") {
      throw new InvalidArgumentError(label("toolChoice"), `"any" on backend ${backend} needs mode "native": prompt-injected tools (which mode ${t.mode ?? "auto"} may fall back to) have no tool_choice`);
    }
  }
  if (t.reasoningEffort !== undefined) {
    const levels = EFFORT_LEVELS[backend];
    if (!levels) throw new InvalidArgumentError(label("reasoningEffort"), `backend ${backend} has no reasoning-effort setting (${Object.keys(EFFORT_LEVELS).join(", ")} do)`);
    if (!levels.includes(t.reasoningEffort)) throw new InvalidArgumentError(label("reasoningEffort"), `backend ${backend} takes ${levels.join(", ")}, not ${JSON.stringify(t.reasoningEffort)}`);
    if (backend === "ollama" && t.think === false) throw new InvalidArgumentError(label("reasoningEffort"), "a thinking level with think false: Ollama takes the level as its think value; drop one");
  }
  if (t.sampling !== undefined) assertSampling(t, label("sampling"));
  if (t.recommendedSampling) {
    if (backend === "sim") throw new InvalidArgumentError(label("recommendedSampling"), "the simulated model has no sampling");
    resolveSampling(samplingIdentity(t), { recommendedSampling: true });
  }
  assertBudget(t, label);
}

function assertSampling(t: AxesTarget, flag: string): void {
  if (t.backend === "sim") throw new InvalidArgumentError(flag, "the simulated model has no sampling: its answers come from the oracle and the fault profile");
  const takes = BODY_FIELDS[t.backend];
  for (const [key, value] of Object.entries(t.sampling ?? {})) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) throw new InvalidArgumentError(flag, `"${key}" is not a request field name`);
    if (Object.hasOwn(NOT_SAMPLING, key)) throw new InvalidArgumentError(flag, `${key}: ${NOT_SAMPLING[key]}`);
    if (!["number", "string", "boolean"].includes(typeof value)) throw new InvalidArgumentError(flag, `${key}: expected a number, string or boolean, got ${JSON.stringify(value)}`);
    if (takes && !takes.has(key)) throw new InvalidArgumentError(flag, `${key}: backend ${t.backend} has no equivalent (it takes ${[...takes].filter((k) => !Object.hasOwn(NOT_SAMPLING, k)).join(", ")})`);
  }
}

function assertBudget(t: AxesTarget, label: AxisLabel): void {
  const mode = t.budgetMode ?? "scenario";
  if (mode === "manual") {
    if (!(typeof t.manualTokens === "number" && Number.isInteger(t.manualTokens) && t.manualTokens > 0)) {
      throw new InvalidArgumentError(label("manualTokens"), `budget mode "manual" needs a positive integer token count, got ${JSON.stringify(t.manualTokens)}`);
    }
  } else if (t.manualTokens !== undefined) {
    throw new InvalidArgumentError(label("manualTokens"), `a token count is for budget mode "manual" (the mode is "${mode}")`);
  }
  // Neither reports its window through the client: the budget would be a guess.
  if (mode === "backend" && (t.backend === "sim" || t.backend === "ollama")) {
    const why = t.backend === "sim" ? "the simulated model reports no context window" : "Ollama reports no context window per model (its default depends on the GPU: see --probe)";
    throw new InvalidArgumentError(label("budgetMode"), `"backend" on backend ${t.backend}: ${why}; use "manual" with a token count`);
  }
}

/** The identity the sampling registry keys on: the GGUF path when one is given, else the model. */
function samplingIdentity(t: Pick<AxesTarget, "model" | "ggufPath">): string {
  return t.ggufPath ?? t.model;
}

/** One run's budget: the ContextManager's, and the window to ask the backend for (Ollama's num_ctx). */
export interface RunBudget {
  budgetTokens: number;
  /** Undefined: the backend keeps its own window (budget mode "backend"). */
  contextTokens?: number;
}

/**
 * The budget of one run of `scenario`. `backend` asks the client (getContextLength) and fails
 * when it reports none; compaction scenarios keep their own budget in every mode.
 *
 * @example await runBudget(scenario, { budgetMode: "manual", manualTokens: 16384 }, client) // { budgetTokens: 16384, contextTokens: 16384 }
 */
export async function runBudget(scenario: EvalScenario, c: RunAxes & { backend: string }, client: LLMClient): Promise<RunBudget> {
  const mode = c.budgetMode ?? "scenario";
  if (mode === "scenario" || scenario.tags.includes("compaction")) {
    return { budgetTokens: scenario.budgetTokens, contextTokens: scenario.contextTokens ?? scenario.budgetTokens };
  }
  if (mode === "manual") return { budgetTokens: c.manualTokens!, contextTokens: c.manualTokens! };
  const reported = await client.getContextLength();
  if (reported === undefined) throw new InvalidArgumentError("budgetMode", `"backend": backend ${c.backend} reported no context length; use "manual" with a token count`);
  return { budgetTokens: reported };
}

/**
 * The request defaults of one run: tool_choice forced for `any` (the neutral "required", which
 * OpenAI-compatible servers get as is and Anthropic as "any"), then the body: recommended
 * sampling, the row's sampling over it, the effort in the backend's form, and on Ollama the
 * run's num_ctx (per request, so one client shared by runs of different scenarios stays right).
 *
 * @example runRequest({ backend: "openai", model: "m", toolChoice: "any", reasoningEffort: "high" }, undefined)
 * // { toolChoice: "required", body: { reasoning_effort: "high" } }
 */
export function runRequest(c: AxesTarget, contextTokens: number | undefined): RequestOverrides | undefined {
  const body: Record<string, unknown> = {};
  if (c.recommendedSampling) {
    const card = toWireSampling(resolveSampling(samplingIdentity(c), { recommendedSampling: true }));
    if (card.temperature !== undefined) body.temperature = card.temperature;
    Object.assign(body, card.extra);
  }
  Object.assign(body, c.sampling ?? {});
  if (c.reasoningEffort !== undefined) {
    body.reasoning_effort = c.reasoningEffort;
    // Older llama-server builds pass only chat_template_kwargs to the template; newer ones also map reasoning_effort.
    if (c.backend === "llamaserver") body.chat_template_kwargs = { reasoning_effort: c.reasoningEffort };
  }
  if (c.backend === "ollama" && contextTokens !== undefined) body.options = { num_ctx: contextTokens };
  const request: RequestOverrides = {
    ...(c.toolChoice === "any" ? { toolChoice: "required" as const } : {}),
    ...(Object.keys(body).length > 0 ? { body } : {}),
  };
  return Object.keys(request).length > 0 ? request : undefined;
}

/**
 * `--sampling temperature=0.2 top_k=20 stop=END`: numbers and true/false are typed, anything
 * else is a string; a repeated key or a part without `=` is refused.
 *
 * @example parseSampling(["temperature=0.2", "top_k=20"]) // { temperature: 0.2, top_k: 20 }
 */
export function parseSampling(parts: readonly string[], flag = "--sampling"): Record<string, SamplingValue> {
  const out: Record<string, SamplingValue> = {};
  for (const part of parts) {
    const eq = part.indexOf("=");
    if (eq <= 0) throw new InvalidArgumentError(flag, `expected key=value, got "${part}"`);
    const key = part.slice(0, eq);
    const raw = part.slice(eq + 1);
    if (Object.hasOwn(out, key)) throw new InvalidArgumentError(flag, `${key} is given twice`);
    out[key] = raw === "true" ? true : raw === "false" ? false : /^-?(\d+\.?\d*|\.\d+)(e-?\d+)?$/i.test(raw) ? Number(raw) : raw;
  }
  return out;
}
