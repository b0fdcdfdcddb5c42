/**
 * The lift table of docs/agents/README.md: per agent and case, whether the agent finished the
 * task through the proxy, and (text-call cases) directly against the same model.
 */
import type { CaseOutcome } from "./case-spec.js";
import { CASES } from "./turn-policy.js";

export const LIFT_HEADER = [`| agent | ${CASES.join(" | ")} |`, `|---|${CASES.map(() => "---|").join("")}`].join("\n");

const mark = (o: CaseOutcome | undefined): string => (o === undefined ? "–" : o.file === "forge" ? "✅" : "❌");

/**
 * One agent's row: the through-proxy result, with the direct one beside it where it was measured.
 *
 * @example
 * liftRow("pi", outcomes); // "| pi | ✅ | ✅ (❌ direct) | ✅ (❌ direct) | ✅ (❌ direct) | ✅ | ✅ |"
 */
export function liftRow(agent: string, outcomes: readonly CaseOutcome[]): string {
  const cells = CASES.map((c) => {
    const proxied = outcomes.find((o) => o.case === c && o.mode === "proxy");
    const direct = outcomes.find((o) => o.case === c && o.mode === "direct");
    return direct === undefined ? mark(proxied) : `${mark(proxied)} (${mark(direct)} direct)`;
  });
  return `| ${agent} | ${cells.join(" | ")} |`;
}
