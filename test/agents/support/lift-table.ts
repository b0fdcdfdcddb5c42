/**
 * The lift tables of docs/agents/README.md and docs/clients/README.md: per agent (or client
 * library) and case, whether it finished the task through the proxy, and (text-call cases)
 * directly against the same model.
 */
import type { CaseOutcome } from "./case-spec.js";
import { CASES } from "./turn-policy.js";

/**
 * The table's head; its first column names what the rows are.
 *
 * @example
 * liftHeader("client"); // "| client | native | hermes | … |\n|---|---|…"
 */
export const liftHeader = (rows: string): string => [`| ${rows} | ${CASES.join(" | ")} |`, `|---|${CASES.map(() => "---|").join("")}`].join("\n");

export const LIFT_HEADER = liftHeader("agent");

/** What a cell needs of a run: which case, which way, and what hello.txt held after it. */
export type LiftOutcome = Pick<CaseOutcome, "case" | "mode" | "file">;

const mark = (o: LiftOutcome | undefined): string => (o === undefined ? "–" : o.file === "forge" ? "✅" : "❌");

/**
 * One agent's (or client's) row: the through-proxy result, with the direct one beside it where it was measured.
 *
 * @example
 * liftRow("pi", outcomes); // "| pi | ✅ | ✅ (❌ direct) | ✅ (❌ direct) | ✅ (❌ direct) | ✅ | ✅ |"
 */
export function liftRow(name: string, outcomes: readonly LiftOutcome[]): string {
  const cells = CASES.map((c) => {
    const proxied = outcomes.find((o) => o.case === c && o.mode === "proxy");
    const direct = outcomes.find((o) => o.case === c && o.mode === "direct");
    return direct === undefined ? mark(proxied) : `${mark(proxied)} (${mark(direct)} direct)`;
  });
  return `| ${name} | ${cells.join(" | ")} |`;
}
