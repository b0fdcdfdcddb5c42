/** Every scenario of the suite, in report order, plus name/tag selection. */
import { InvalidArgumentError } from "../../src/core/index.js";
import type { EvalScenario } from "../scenario.js";
import { PLUMBING } from "./plumbing.js";
import { MODEL_QUALITY } from "./model-quality.js";
import { REASONING } from "./reasoning.js";
import { COMPACTION } from "./compaction.js";
import { STATEFUL_OG } from "./stateful-og.js";
import { CHECKED } from "./checked.js";
import { STATEFUL_VARIANTS } from "./stateful-variant.js";
import { STATEFUL_CUSTOM } from "./stateful-custom.js";
import { COMPACTION_CHAIN } from "./compaction-chain.js";
import { HUMAN } from "./human.js";
import { MCP } from "./mcp.js";
import { ADVANCED_API } from "./advanced-api.js";
import { ADVANCED_DATA } from "./advanced-data.js";

/** The plain scenarios under forge's names (its "lambda" scenarios), then our compaction ones. */
export const CORE_SCENARIOS: EvalScenario[] = [...PLUMBING, ...MODEL_QUALITY, ...REASONING, ...COMPACTION];

/** forge's advanced_reasoning family in its column order (dge, art, grs, iar); plain and stateful are listed apart. */
const ADVANCED: EvalScenario[] = [...ADVANCED_DATA, ...ADVANCED_API];
const plain = (list: EvalScenario[]) => list.filter((s) => !s.tags.includes("stateful"));
const stateful = (list: EvalScenario[]) => list.filter((s) => s.tags.includes("stateful"));

/** @example ALL_SCENARIOS.map((s) => s.name) // ["basic_2step", ..., "grounded_synthesis", "basic_2step_checked", ..., "compaction_chain_p3", "human_approval_granted", ..., "mcp_rescue_text"] */
export const ALL_SCENARIOS: EvalScenario[] = [
  ...CORE_SCENARIOS,
  ...plain(ADVANCED),
  ...CHECKED,
  ...STATEFUL_OG,
  ...STATEFUL_VARIANTS,
  ...STATEFUL_CUSTOM,
  ...stateful(ADVANCED),
  ...COMPACTION_CHAIN,
  ...HUMAN,
  ...MCP,
];

/**
 * Pick scenarios by name (exact) and/or tag (any match); both empty selects all. An unknown
 * name is an error, not an empty selection. Selecting all leaves out the scenarios whose
 * fixture cannot open here (the mcp family without its optional packages) and says so through
 * `onLeftOut`; a scenario asked for by name or tag is kept, and fails loudly when it opens.
 *
 * @example selectScenarios({ names: ["basic_2step"], tags: [] })
 */
export function selectScenarios(
  filter: { names?: string[]; tags?: string[] },
  from: EvalScenario[] = ALL_SCENARIOS,
  onLeftOut: (note: string) => void = (note) => console.error(note),
): EvalScenario[] {
  const names = filter.names ?? [];
  const tags = filter.tags ?? [];
  const known = new Set(from.map((s) => s.name));
  const unknown = names.filter((n) => !known.has(n));
  if (unknown.length > 0) throw new InvalidArgumentError("scenario", `unknown scenario(s): ${unknown.join(", ")}; known: ${[...known].join(", ")}`);
  assertTags(tags, from);
  const picked = from.filter((s) => (names.length === 0 || names.includes(s.name)) && (tags.length === 0 || s.tags.some((t) => tags.includes(t))));
  if (names.length > 0 || tags.length > 0) return picked;
  const missing = new Map(fixturesOfAll(picked).map((f) => [f, f.missing()] as const));
  const leftOut = picked.filter((s) => s.fixture && missing.get(s.fixture) !== undefined);
  for (const [fixture, why] of missing) {
    if (why === undefined) continue;
    const scenarios = leftOut.filter((s) => s.fixture === fixture).map((s) => s.name);
    onLeftOut(`left out ${scenarios.length} scenario(s) that need ${fixture.name} (${why}): ${scenarios.join(", ")}`);
  }
  return picked.filter((s) => !leftOut.includes(s));
}

function fixturesOfAll(scenarios: readonly EvalScenario[]) {
  return [...new Set(scenarios.flatMap((s) => (s.fixture ? [s.fixture] : [])))];
}

/**
 * Tags that some scenario carries; an unknown one is refused naming the known ones (a mistyped
 * tag would otherwise select nothing and the run would report "no runs").
 */
export function assertTags(tags: readonly string[], from: EvalScenario[] = ALL_SCENARIOS): void {
  const known = [...new Set(from.flatMap((s) => s.tags))];
  const unknown = tags.filter((t) => !known.includes(t));
  if (unknown.length > 0) throw new InvalidArgumentError("tags", `unknown tag(s): ${unknown.join(", ")}; known: ${known.join(", ")}`);
}
