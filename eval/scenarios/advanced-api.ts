/**
 * Advanced reasoning, part B. `inconsistent_api_recovery`: a compliance audit chained through
 * seven legacy endpoints that each break a different convention (prefixed ids, ISO dates,
 * cents vs dollars, upper vs lower case, a pipe separator), so what one error teaches is wrong
 * for the next. `grounded_synthesis`: a hiring decision where the candidates every other tool
 * praises are ruled out by one line in a compatibility check or a team-fit note. The stateful
 * pairs run the same tools over a per-run backend that records what was really done, so a
 * right-looking report that skipped a step is still wrong.
 *
 * The legacy endpoints answer a convention violation with an `ERROR: ...` result instead of
 * throwing, as the API they imitate does: the model reads it and must change the call, and a
 * run without the runner's tool-error recovery (bare) survives it. A call that breaks the
 * declared argument types (a string `txn_id`) is refused by the runner's argument check.
 */
import { z } from "zod";
import { defineTool, ToolResolutionError, Workflow } from "../../src/core/index.js";
import { scenario, type EvalScenario, type OracleView, type Slip } from "../scenario.js";
import { isSuccess, planOracle, Seen } from "./oracle-kit.js";

type Result = OracleView["results"][number];

// ── inconsistent_api_recovery: data and conventions ─────────────────────────────────────────

const AUDIT_ACCOUNT = "ACC-12345";
const Q4 = { since: "2024-10-01", until: "2024-12-31", period: "2024-Q4" } as const;

/** The account list hands out bare integer ids; every other endpoint wants them as ACC-NNNNN. */
const ACCOUNTS: readonly { id: number; name: string }[] = [
  { id: 12345, name: "Acme Corp" },
  { id: 67890, name: "Globex Industries" },
  { id: 24680, name: "Initech Systems" },
];

const BALANCES: Readonly<Record<string, { cents: number; lastTxnUnix: number; status: string }>> = {
  "ACC-12345": { cents: 750_000, lastTxnUnix: 1_696_000_000, status: "ACTIVE" },
  "ACC-67890": { cents: 320_000, lastTxnUnix: 1_697_500_000, status: "ACTIVE" },
  "ACC-24680": { cents: 180_000, lastTxnUnix: 1_698_200_000, status: "FROZEN" },
};

interface LedgerTxn {
  id: string;
  date: string;
  cents: number;
  category: string;
}

/** Acme's Q4 ledger, in cents: 5,000 + 12,500 + 8,000 = 25,500 USD. The other accounts have none. */
const ACME_LEDGER: readonly LedgerTxn[] = [
  { id: "TXN/00042", date: "2024-10-05", cents: 500_000, category: "services" },
  { id: "TXN/00043", date: "2024-11-12", cents: 1_250_000, category: "hardware" },
  { id: "TXN/00044", date: "2024-12-08", cents: 800_000, category: "services" },
];

/** What a correct audit totals, in dollars. */
export const AUDIT_TOTAL_USD = 25_500;

const SPEND_CODES = ["SVCS", "HRDW", "TRVL", "MISC"] as const;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
const ISO_QUARTER = /^\d{4}-Q[1-4]$/;

// Each check returns the endpoint's complaint, or undefined when the value follows its convention.
// The texts carry no key=value pairs, so an oracle reading facts never mistakes one for data.

function accountIdError(accountId: string): string | undefined {
  if (accountId.startsWith("ACC-")) return undefined;
  return `ERROR: account_id "${accountId}" lacks the ACC- prefix this endpoint needs (write it as ACC-12345).`;
}

function dateRangeError(since: string, until: string): string | undefined {
  if (ISO_DATE.test(since) && ISO_DATE.test(until)) return undefined;
  return `ERROR: since and until must be calendar dates written YYYY-MM-DD (got since "${since}", until "${until}"); Unix timestamps are not read here.`;
}

function spendCodeError(code: string): string | undefined {
  if ((SPEND_CODES as readonly string[]).includes(code)) return undefined;
  return `ERROR: category "${code}" is not a spend code; use one of ${SPEND_CODES.join(" | ")} (four capital letters).`;
}

function regionError(region: string): string | undefined {
  if (/^[a-z]{2}$/.test(region)) return undefined;
  return `ERROR: region "${region}" must be a two-letter ISO country code in lower case, such as us or gb.`;
}

function periodError(period: string): string | undefined {
  if (ISO_QUARTER.test(period)) return undefined;
  return `ERROR: period "${period}" must be an ISO quarter written YYYY-QN (for example 2024-Q4); dates and timestamps are not read here.`;
}

/** The subtotal endpoint's parse: decimal dollars joined by "|", or its complaint. */
function parseAmounts(amounts: string): { values: number[] } | { error: string } {
  const text = amounts.trim();
  if (text === "") return { error: "ERROR: amounts is empty." };
  if (!text.includes("|")) {
    return { error: `ERROR: amounts "${text}" must be decimal dollars joined by a pipe, like 1000.00|2500.00; lists, commas, spaces and cents are refused.` };
  }
  const parts = text.split("|").map((p) => p.trim()).filter((p) => p !== "");
  const values = parts.map(Number);
  if (parts.some((p) => !/^-?\d+(\.\d+)?$/.test(p))) return { error: `ERROR: amounts "${text}" holds a value that is not a decimal dollar amount.` };
  return { values };
}

function ledgerLines(account: string, since: string, until: string, ledger: readonly LedgerTxn[]): string {
  // Only Acme has Q4 activity; the other accounts are real but empty, a decoy, not an error.
  const rows = account === AUDIT_ACCOUNT ? ledger.filter((t) => t.date >= since && t.date <= until) : [];
  const head = `account_id=${account} since=${since} until=${until} count=${rows.length}`;
  return [head, ...rows.map((t) => `txn=${t.id} date=${t.date} amount=${t.cents} unit=cents category=${t.category}`)].join("\n");
}

function balanceLine(accountId: string): string {
  const b = BALANCES[accountId];
  if (!b) return `ERROR: no balance record for account "${accountId}".`;
  return `account_id=${accountId} amount=${b.cents} unit=cents last_txn=${b.lastTxnUnix} last_txn_unit=unix_seconds status=${b.status}`;
}

function accountListing(page: number, pageSize: number): string {
  if (page < 1 || pageSize < 1) return "ERROR: page and page_size count from 1.";
  return [`page=${page} pages=1 accounts=${ACCOUNTS.length}`, ...ACCOUNTS.map((a) => `id=${a.id} name=${a.name.replaceAll(" ", "_")}`)].join("\n");
}

function categorized(txnId: number, code: string, ledger: readonly LedgerTxn[]): string {
  const id = `TXN/${String(txnId).padStart(5, "0")}`;
  const txn = ledger.find((t) => t.id === id);
  if (!txn) return `txn=${id} category=${code} amount_usd=none (no amount on record)`;
  return `txn=${id} category=${code} amount_usd=${(txn.cents / 100).toFixed(2)} gl_bucket=GL-2400`;
}

function complianceLine(region: string, period: string): string {
  return `region=${region} period=${period} status=PASS checks=AML|KYC|SOX flagged_count=0`;
}

/**
 * A correct audit report names the dollar total (25500, as a whole number: 2550000, the total
 * in cents, is a wrong answer), the compliance result and the transaction count.
 *
 * @example auditReportValid('{"flagged_count":0,"total_usd":"25500.00","compliance_status":"PASS","txn_count":3}') // true
 * @example auditReportValid('{"total_usd":"2550000","compliance_status":"PASS","txn_count":3}') // false
 */
export function auditReportValid(report: unknown): boolean {
  if (typeof report !== "string") return false;
  const text = report.toLowerCase().replaceAll(",", "").replaceAll("$", "");
  return /(?<![\d.])25500(?:\.0+)?(?![\d])/.test(text) && text.includes("pass") && text.includes("txn_count");
}

const LEGACY_PARAMS = {
  list: z.object({ page: z.number().int().describe("Page number"), page_size: z.number().int().describe("Records per page") }),
  account: z.object({ account_id: z.string().describe("Account identifier") }),
  range: z.object({ account_id: z.string().describe("Account identifier"), since: z.string().describe("Start of the range"), until: z.string().describe("End of the range") }),
  categorize: z.object({ txn_id: z.number().int().describe("Transaction identifier"), category: z.string().describe("Spend category") }),
  compliance: z.object({ region: z.string().describe("Region"), period: z.string().describe("Reporting period") }),
  subtotal: z.object({ amounts: z.string().describe("The amounts to add up") }),
  submit: z.object({ report: z.string().describe("The audit report") }),
};

const LEGACY_DESCRIPTIONS = {
  legacy_list_accounts: "List the accounts on file.",
  legacy_get_balance: "Current balance of one account.",
  legacy_get_transactions: "Transactions of one account between two dates.",
  legacy_categorize_spend: "Put a transaction under a spend category.",
  legacy_check_compliance: "Run the compliance checks for a region over a reporting period.",
  legacy_aggregate_subtotal: "Add up a set of amounts.",
  legacy_submit_audit: "File the finished compliance audit report.",
} as const;

const LEGACY_SYSTEM_PROMPT = "You are a compliance audit assistant. Complete the audit you are asked for with the tools available.";

const LEGACY_USER_INPUT =
  "Audit Acme Corp (account ACC-12345) for Q4 2024, October 1 to December 31. Get the account balance and the quarter's " +
  "transactions, categorize at least one transaction, run the compliance check for the US region over the quarter, add up " +
  "all the transaction amounts in US dollars, and submit the audit report with the keys flagged_count (int), total_usd (str), " +
  "compliance_status (str) and txn_count (int).";

function legacyWorkflow(name: string, tools: Workflow["tools"]): Workflow {
  return new Workflow({ name, tools, requiredSteps: ["legacy_list_accounts"], terminalTool: "legacy_submit_audit", systemPromptTemplate: LEGACY_SYSTEM_PROMPT });
}

function inconsistentApiWorkflow(): Workflow {
  const d = LEGACY_DESCRIPTIONS;
  return legacyWorkflow("inconsistent_api_recovery", {
    legacy_list_accounts: defineTool({ name: "legacy_list_accounts", description: d.legacy_list_accounts, parameters: LEGACY_PARAMS.list, execute: ({ page, page_size }) => accountListing(page, page_size) }),
    legacy_get_balance: defineTool({
      name: "legacy_get_balance",
      description: d.legacy_get_balance,
      parameters: LEGACY_PARAMS.account,
      execute: ({ account_id }) => accountIdError(account_id.trim()) ?? balanceLine(account_id.trim()),
    }),
    legacy_get_transactions: defineTool({
      name: "legacy_get_transactions",
      description: d.legacy_get_transactions,
      parameters: LEGACY_PARAMS.range,
      execute: ({ account_id, since, until }) => {
        const [a, s, u] = [account_id.trim(), since.trim(), until.trim()];
        return accountIdError(a) ?? dateRangeError(s, u) ?? ledgerLines(a, s, u, ACME_LEDGER);
      },
    }),
    legacy_categorize_spend: defineTool({
      name: "legacy_categorize_spend",
      description: d.legacy_categorize_spend,
      parameters: LEGACY_PARAMS.categorize,
      execute: ({ txn_id, category }) => spendCodeError(category.trim()) ?? categorized(txn_id, category.trim(), ACME_LEDGER),
    }),
    legacy_check_compliance: defineTool({
      name: "legacy_check_compliance",
      description: d.legacy_check_compliance,
      parameters: LEGACY_PARAMS.compliance,
      execute: ({ region, period }) => regionError(region.trim()) ?? periodError(period.trim()) ?? complianceLine(region.trim(), period.trim()),
    }),
    legacy_aggregate_subtotal: defineTool({
      name: "legacy_aggregate_subtotal",
      description: d.legacy_aggregate_subtotal,
      parameters: LEGACY_PARAMS.subtotal,
      execute: ({ amounts }) => {
        const parsed = parseAmounts(amounts);
        if ("error" in parsed) return parsed.error;
        return `subtotal_usd=${sum(parsed.values).toFixed(2)} amounts_processed=${parsed.values.length}`;
      },
    }),
    legacy_submit_audit: defineTool({ name: "legacy_submit_audit", description: d.legacy_submit_audit, parameters: LEGACY_PARAMS.submit, execute: () => "audit report filed" }),
  });
}

function sum(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

// ── inconsistent_api_recovery: the oracle and its slips ─────────────────────────────────────

/** A result the endpoint answered normally (not a runner error channel, not a legacy ERROR). */
function answered(r: Result): boolean {
  return isSuccess(r) && !r.content.startsWith("ERROR");
}

function answeredBy(view: OracleView, tool: string): Result | undefined {
  return view.results.findLast((r) => r.tool === tool && answered(r));
}

/** Every transaction row of the latest answered ledger read (Acme's three on the correct path). */
function ledgerRows(seen: Seen): { id: string; cents: number }[] {
  const read = seen.successes("legacy_get_transactions").findLast((r) => !r.content.startsWith("ERROR"));
  const source = read?.content ?? ACME_LEDGER.map((t) => `txn=${t.id} amount=${t.cents}`).join("\n");
  return [...source.matchAll(/txn=(\S+)\s.*?amount=(\d+)/g)].map((m) => ({ id: m[1]!, cents: Number(m[2]) }));
}

const txnNumber = (id: string): number => Number(id.replace(/\D/g, ""));
const dollars = (seen: Seen): string => ledgerRows(seen).map((t) => (t.cents / 100).toFixed(2)).join("|");

function auditReport(seen: Seen, totalUsd: string, complianceStatus = seen.get("legacy_check_compliance", "status", "PASS")): string {
  return JSON.stringify({
    flagged_count: Number(seen.get("legacy_check_compliance", "flagged_count", "0")),
    total_usd: totalUsd,
    compliance_status: complianceStatus,
    txn_count: ledgerRows(seen).length,
  });
}

/**
 * The shortest correct path: seven endpoints plus one retry, because the subtotal endpoint's
 * separator is told nowhere but in its error (a comma list is what anyone sends first).
 */
const legacyOracle = planOracle([
  { tool: "legacy_list_accounts", args: () => ({ page: 1, page_size: 50 }) },
  { tool: "legacy_get_balance", args: () => ({ account_id: AUDIT_ACCOUNT }) },
  { tool: "legacy_get_transactions", args: () => ({ account_id: AUDIT_ACCOUNT, since: Q4.since, until: Q4.until }) },
  { tool: "legacy_categorize_spend", args: (s) => ({ txn_id: txnNumber(ledgerRows(s)[0]?.id ?? "42"), category: "SVCS" }) },
  { tool: "legacy_check_compliance", args: () => ({ region: "us", period: Q4.period }) },
  { tool: "legacy_aggregate_subtotal", firstTry: { amounts: "5000.00, 12500.00, 8000.00" }, args: (s) => ({ amounts: dollars(s) }) },
  { tool: "legacy_submit_audit", args: (s) => ({ report: auditReport(s, s.get("legacy_aggregate_subtotal", "subtotal_usd", "25500.00")) }) },
]);

/**
 * The model's prose turns so far: these oracles make one call per turn and every call gets one
 * result, so an assistant turn without a result was prose.
 */
function proseTurns(view: OracleView): number {
  return view.turn - view.results.length;
}

/**
 * Recoverable: the first legacy ERROR makes the model stop and explain instead of retrying.
 * A retry nudge (reforged) brings it back; without one (bare) the run ends there.
 */
const stopsAtLegacyError: Slip = {
  name: "stops_at_legacy_error",
  rate: 0.2,
  when: (v) => v.results.at(-1)?.content.startsWith("ERROR") === true && proseTurns(v) <= 0,
  step: () => ({ text: "The legacy API answered with an error, so I can't complete this part of the audit. Please check the endpoint and try again." }),
};

/**
 * Wrong conclusion: the ledger's amounts are cents and the model adds them up unconverted, so
 * the subtotal (and the report) says 2550000 instead of 25500.
 */
function totalsInCents(rate: number): Slip {
  return {
    name: "totals_in_cents",
    rate,
    when: (v) => answeredBy(v, "legacy_check_compliance") !== undefined,
    step: (v) => {
      const seen = new Seen(v.results);
      const subtotal = answeredBy(v, "legacy_aggregate_subtotal");
      if (!subtotal) return { tool: "legacy_aggregate_subtotal", args: { amounts: ledgerRows(seen).map((t) => String(t.cents)).join("|") } };
      return { tool: "legacy_submit_audit", args: { report: auditReport(seen, seen.get("legacy_aggregate_subtotal", "subtotal_usd", "2550000.00")) } };
    },
  };
}

export const inconsistentApiRecovery: EvalScenario = scenario({
  name: "inconsistent_api_recovery",
  description: "Cascading recovery across seven legacy endpoints, each breaking a different convention (id prefix, dates, units, case, separator).",
  tags: ["advanced", "reasoning"],
  userInput: LEGACY_USER_INPUT,
  idealIterations: 8,
  maxIterations: 20,
  budgetTokens: 8192,
  build: () => ({ workflow: inconsistentApiWorkflow(), state: undefined }),
  validate: ({ args }) => auditReportValid(args.report),
  oracle: legacyOracle,
  slips: [totalsInCents(0.08), stopsAtLegacyError],
});

// ── grounded_synthesis: data ────────────────────────────────────────────────────────────────

const OPEN_ROLE = [
  "Role: Senior Backend Engineer, Payments Platform (a senior individual-contributor seat).",
  "Requirements:",
  "  - at least 5 years of production Python",
  "  - a distributed-systems background",
  "  - payment-processing experience, strongly preferred: the team is building merchant integrations in the style of Stripe Connect",
  "Timing: the hire is for the Q3 product launch; the new senior engineer has to be in seat and up to speed well before the launch sprint starts.",
].join("\n");

interface Candidate {
  brief: string;
  skills: string;
  compatibility: string;
  team: string;
}

/**
 * Five candidates. Sarah and James top every skill measure but are blocked by their
 * compatibility checks (a non-compete, a visa sponsorship the team has no slot for); Diana
 * passes compatibility but her team-fit note says she wants a lead role this IC seat is not;
 * Marcus is eligible but has no payments background; Aisha is eligible and has it.
 */
const CANDIDATES: Readonly<Record<string, Candidate>> = {
  "Sarah Chen": {
    brief: "8 years of Python; formerly Senior Engineer at Stripe; a leader in the payments domain",
    skills:
      "Skills: Sarah Chen. 8 years; Python, Go, PostgreSQL, Redis. Payments: built the webhook reliability layer of Stripe Connect " +
      "and the idempotency middleware of Stripe Subscriptions. Technical interview: top decile (98th percentile). Four payment-routing " +
      "systems in production. Led a team of four at Stripe and brought two junior engineers up to mid-level.",
    compatibility:
      "Compatibility: Sarah Chen. Background check clean; references excellent. Legal: her Stripe contract carries a payments-industry " +
      "non-compete covenant that runs until late 2026. Putting her on a payments product before then needs a waiver negotiated with " +
      "Stripe; in comparable cases that has been a long project of its own, and it may not succeed. She could instead join a " +
      "non-payments team (infrastructure or platform), where the covenant does not apply. Pay expectation: senior band.",
    team:
      "Team fit: Sarah Chen with Payments Platform. The team has a clear gap in webhook reliability and idempotency (it buys that from " +
      "a SaaS vendor today), and her Stripe webhook work fills it exactly. Culture fit very strong: peers call her the engineer you want " +
      "around when payment edge cases appear. Ramp-up: about 2 weeks to a first production change.",
  },
  "James Patel": {
    brief: "9 years of Python; formerly infrastructure at DeepMind; a distributed-systems expert",
    skills:
      "Skills: James Patel. 9 years; Python, C++, distributed systems. Designed DeepMind's gradient-aggregation tier and contributed " +
      "to the JAX runtime. Technical interview: top decile (96th percentile). Three large ML training platforms; little direct payments " +
      "work, but very strong distributed-systems instincts. Led an infrastructure team of six.",
    compatibility:
      "Compatibility: James Patel. Background check clean; references excellent. People Ops: he is on F-1 OPT, and working on past his " +
      "current authorization needs us to sponsor an H-1B visa. We sponsor on some engineering tracks, but Payments Platform has no " +
      "sponsorship slot in this hiring cycle; getting one means petitioning the immigration committee, which has been slow and " +
      "uncertain. Pay expectation: senior band.",
    team:
      "Team fit: James Patel with Payments Platform. The team's distributed-systems depth is uneven and he would raise the bar on " +
      "consistency at scale. Systems first, payments second: about 4 to 6 weeks to learn the payments domain. Culture fit very strong: " +
      "references call him a systems thinker who lifts the people around him.",
  },
  "Aisha Nakamura": {
    brief: "7 years of Python; formerly at Square; payments-adjacent backend work",
    skills:
      "Skills: Aisha Nakamura. 7 years; Python, Java, MySQL, Kafka. Payments backend at Square: built the reconciliation pipeline and " +
      "owned merchant payout retries. Technical interview: strong (78th percentile). Two payments-adjacent backend systems. Tech lead " +
      "of a team of three.",
    compatibility:
      "Compatibility: Aisha Nakamura. Background check clean; references solid. People Ops: US citizen, no non-compete or other " +
      "restrictive covenant; standard onboarding paperwork, so she could start as soon as she accepts. Pay expectation: senior band.",
    team:
      "Team fit: Aisha Nakamura with Payments Platform. Brings payments experience from day one; her reconciliation and retry work at " +
      "Square applies directly. Culture fit strong: references call her steady and pragmatic. Ramp-up: 2 to 3 weeks.",
  },
  "Marcus Reyes": {
    brief: "5 years of Python; formerly Adobe Creative Cloud; generalist backend",
    skills:
      "Skills: Marcus Reyes. 5 years; Python, JavaScript, MongoDB. Generalist backend at Adobe: licensing and entitlement APIs for " +
      "Creative Cloud. Technical interview: solid (72nd percentile). One backend system at scale; no payments background. Senior IC " +
      "without management experience.",
    compatibility:
      "Compatibility: Marcus Reyes. Background check clean; references solid. People Ops: US permanent resident, no non-compete or " +
      "restrictive covenant; Adobe's standard IP release is on file. He could start as soon as he accepts. Pay expectation: senior band.",
    team:
      "Team fit: Marcus Reyes with Payments Platform. A generalist senior; the payments learning curve is steep, since licensing and " +
      "entitlements work nothing like payment processing. Culture fit strong: adaptable and curious. Ramp-up: 8 to 12 weeks.",
  },
  "Diana Kim": {
    brief: "10 years of Python; formerly Principal Engineer at Stripe; a payments domain expert",
    skills:
      "Skills: Diana Kim. 10 years; Python, Go, PostgreSQL, gRPC. Principal Engineer at Stripe: led the Stripe Issuing authorization " +
      "service and co-designed the global fraud-scoring pipeline. Technical interview: top decile (99th percentile). Five payments " +
      "systems at scale; several internal engineering-blog posts. Ran Stripe's payments-platform reading group; mentored six senior ICs.",
    compatibility:
      "Compatibility: Diana Kim. Background check clean; references excellent. Legal: she joined Stripe before its current non-compete " +
      "policy and her offer letter has no restrictive covenants. US citizen; standard paperwork, so she could start as soon as she " +
      "accepts. Pay expectation: principal band, though she is open to the senior band for the right role.",
    team:
      "Team fit: Diana Kim with Payments Platform. Technically a strong addition; her Issuing work maps onto our roadmap. But she has " +
      "said plainly that her next move should be into a tech-lead or engineering-management track with direct reports, and several of " +
      "the offers she is weighing are people-management roles. This position is an IC seat with no reports, and the team has no lead " +
      "opening this cycle. The recruiter's read: she would take it only if her lead offers fall through, and would keep looking for a " +
      "lead role afterwards.",
  },
};

const POOL = Object.keys(CANDIDATES);
const PICK = "Aisha Nakamura";

/**
 * The canonical candidate a name means: the full name or a first or last name, in any case.
 *
 * @example resolveCandidate("nakamura") // "Aisha Nakamura"
 */
export function resolveCandidate(name: string): string | undefined {
  const key = name.trim().toLowerCase().replace(/\s+/g, " ");
  if (key === "") return undefined;
  return POOL.find((full) => full.toLowerCase() === key || full.toLowerCase().split(" ").includes(key));
}

function candidateOf(name: string, tool: string): Candidate {
  const canonical = resolveCandidate(name);
  // The name was well-formed and simply matches nobody: a resolution miss, not a tool error.
  if (!canonical) throw new ToolResolutionError(`no candidate matches "${name}"; the pool is ${POOL.join(", ")}`, tool);
  return CANDIDATES[canonical]!;
}

function poolListing(): string {
  return [`Candidate pool, Senior Backend Engineer, Payments Platform (${POOL.length} candidates):`, ...POOL.map((n) => `  - ${n}: ${CANDIDATES[n]!.brief}`)].join("\n");
}

/** Words that show a rationale weighed a blocker: the non-compete, the visa, the lead-role mismatch. */
const BLOCKER_TERMS = [
  "non-compete", "noncompete", "non compete", "covenant", "waiver",
  "visa", "sponsor", "h-1b", "h1b", "f-1", "immigration", "work authorization",
  "tech lead", "tech-lead", "engineering manage", "management track", "people-management", "people management",
  "lead role", "lead position", "lead opening", "direct reports", "ic seat", "ic role", "ic track", "individual contributor",
];
const PASSED_OVER = /\b(sarah|chen|james|patel|diana|kim)\b/;

/**
 * A grounded decision picks Aisha Nakamura and shows the others were weighed: the rationale
 * names a blocker or one of the candidates passed over.
 *
 * @example hiringDecisionValid({ candidate: "Aisha Nakamura", rationale: "Sarah Chen is under a non-compete." }) // true
 * @example hiringDecisionValid({ candidate: "Sarah Chen", rationale: "Top decile." }) // false
 */
export function hiringDecisionValid(args: Record<string, unknown>): boolean {
  const candidate = String(args.candidate ?? "").toLowerCase();
  const rationale = String(args.rationale ?? "").toLowerCase();
  const picked = /\b(aisha|nakamura)\b/.test(candidate);
  return picked && (BLOCKER_TERMS.some((t) => rationale.includes(t)) || PASSED_OVER.test(rationale));
}

const HIRING_PARAMS = {
  none: z.object({}),
  candidate: z.object({ candidate_name: z.string().describe("The candidate's full name") }),
  decision: z.object({ candidate: z.string().describe("The candidate you hire"), rationale: z.string().describe("A short reason for the decision") }),
};

const HIRING_DESCRIPTIONS = {
  get_open_role: "The open role's requirements and constraints.",
  get_candidate_pool: "The candidates under consideration.",
  get_skill_summary: "A candidate's condensed skill assessment.",
  get_compatibility_check: "A candidate's compliance and eligibility check for the open role.",
  get_team_dynamics: "How a candidate would fit the team.",
  submit_hiring_decision: "Record the hiring decision with a short rationale.",
} as const;

const HIRING_SYSTEM_PROMPT = "You are the hiring manager. Evaluate the candidate pool for the open role with the tools available, then submit your decision.";

const HIRING_USER_INPUT =
  "We're hiring a senior backend engineer and have a pool of candidates. Look at the role, assess the candidates, and submit " +
  "your hiring decision with a short rationale: why you chose your candidate and why you passed over the others you considered.";

const HIRING_RATIONALE =
  "Aisha Nakamura: payments backend at Square, eligible, can start at once and ramps in 2-3 weeks. Passed over Sarah Chen " +
  "(a Stripe non-compete runs to late 2026 and needs a waiver), James Patel (needs H-1B sponsorship and the team has no slot), " +
  "Diana Kim (wants a tech-lead or management track; this is an IC seat) and Marcus Reyes (no payments background, 8-12 week ramp).";

function hiringWorkflow(name: string, tools: Workflow["tools"]): Workflow {
  return new Workflow({
    name,
    tools,
    requiredSteps: ["get_candidate_pool", "get_open_role"],
    terminalTool: "submit_hiring_decision",
    systemPromptTemplate: HIRING_SYSTEM_PROMPT,
  });
}

function groundedSynthesisWorkflow(): Workflow {
  const d = HIRING_DESCRIPTIONS;
  const p = HIRING_PARAMS;
  return hiringWorkflow("grounded_synthesis", {
    get_open_role: defineTool({ name: "get_open_role", description: d.get_open_role, parameters: p.none, execute: () => OPEN_ROLE }),
    get_candidate_pool: defineTool({ name: "get_candidate_pool", description: d.get_candidate_pool, parameters: p.none, execute: () => poolListing() }),
    get_skill_summary: defineTool({ name: "get_skill_summary", description: d.get_skill_summary, parameters: p.candidate, execute: ({ candidate_name }) => candidateOf(candidate_name, "get_skill_summary").skills }),
    get_compatibility_check: defineTool({
      name: "get_compatibility_check",
      description: d.get_compatibility_check,
      parameters: p.candidate,
      execute: ({ candidate_name }) => candidateOf(candidate_name, "get_compatibility_check").compatibility,
    }),
    get_team_dynamics: defineTool({ name: "get_team_dynamics", description: d.get_team_dynamics, parameters: p.candidate, execute: ({ candidate_name }) => candidateOf(candidate_name, "get_team_dynamics").team }),
    submit_hiring_decision: defineTool({ name: "submit_hiring_decision", description: d.submit_hiring_decision, parameters: p.decision, execute: ({ candidate }) => `decision recorded: ${candidate}` }),
  });
}

// ── grounded_synthesis: the oracle and its slips ────────────────────────────────────────────

/**
 * The shortest grounded path: the pool, the role, every compatibility check (where two
 * blockers hide), then the team-fit notes of the two still standing out (Diana's blocker
 * hides there), and the decision.
 */
const hiringOracle = planOracle([
  { tool: "get_candidate_pool", args: () => ({}) },
  { tool: "get_open_role", args: () => ({}) },
  ...POOL.map((name) => ({ tool: "get_compatibility_check", args: () => ({ candidate_name: name }) })),
  { tool: "get_team_dynamics", args: () => ({ candidate_name: "Diana Kim" }) },
  { tool: "get_team_dynamics", args: () => ({ candidate_name: PICK }) },
  { tool: "submit_hiring_decision", args: () => ({ candidate: PICK, rationale: HIRING_RATIONALE }) },
]);

function readFor(view: OracleView, tool: string, name: string): boolean {
  return new Seen(view.results).successes(tool).some((r) => resolveCandidate(String(r.args.candidate_name ?? "")) === name);
}

const allCompatibilityRead = (v: OracleView): boolean => POOL.every((n) => readFor(v, "get_compatibility_check", n));

/** Wrong conclusion: every check read, and the model still hires the top scorer over her non-compete. */
function picksTopScorer(rate: number): Slip {
  return {
    name: "picks_top_scorer",
    rate,
    when: allCompatibilityRead,
    step: () => ({
      tool: "submit_hiring_decision",
      args: { candidate: "Sarah Chen", rationale: "Sarah Chen has the strongest payments record in the pool (98th percentile, built Stripe Connect's webhook layer) and ramps in two weeks." },
    }),
  };
}

/** Wrong conclusion: the compatibility checks clear Diana, and the model hires her without reading her team-fit note. */
function overlooksTeamFit(rate: number): Slip {
  return {
    name: "overlooks_team_fit",
    rate,
    when: (v) => allCompatibilityRead(v) && !readFor(v, "get_team_dynamics", "Diana Kim"),
    step: () => ({
      tool: "submit_hiring_decision",
      args: {
        candidate: "Diana Kim",
        rationale: "Diana Kim: 99th percentile, principal-level payments work at Stripe, no restrictive covenants. Sarah Chen has a non-compete and James Patel needs visa sponsorship.",
      },
    }),
  };
}

/**
 * Recoverable: the pool listing alone makes the model decide, before it has read the role.
 * Step enforcement (reforged) blocks the early decision; without it (bare) it stands.
 */
const decidesBeforeReading: Slip = {
  name: "decides_before_reading",
  rate: 0.15,
  when: (v) => {
    const seen = new Seen(v.results);
    return seen.successes("get_candidate_pool").length > 0 && !seen.tried("get_open_role") && !seen.tried("submit_hiring_decision");
  },
  step: () => ({ tool: "submit_hiring_decision", args: { candidate: "Sarah Chen", rationale: "Sarah Chen, ex-Stripe and a payments domain leader, is the obvious fit from the pool." } }),
};

export const groundedSynthesis: EvalScenario = scenario({
  name: "grounded_synthesis",
  description: "Synthesis under lure pressure: hire from a pool where the candidates every tool praises are ruled out by one line elsewhere.",
  tags: ["advanced", "reasoning"],
  userInput: HIRING_USER_INPUT,
  idealIterations: 10,
  maxIterations: 20,
  budgetTokens: 8192,
  build: () => ({ workflow: groundedSynthesisWorkflow(), state: undefined }),
  validate: ({ args }) => hiringDecisionValid(args),
  oracle: hiringOracle,
  slips: [picksTopScorer(0.4), overlooksTeamFit(0.2), decidesBeforeReading],
});

// ── inconsistent_api_recovery_stateful ──────────────────────────────────────────────────────

/** The legacy backend of one run: what each endpoint really did, and the ledger it writes to. */
export interface LegacyAuditState {
  accountsListed: boolean;
  balancesRead: Set<string>;
  /** The latest range read per account. */
  transactionsRead: Map<string, { since: string; until: string }>;
  /** Acme's ledger; legacy_categorize_spend writes its spend code onto a row. */
  ledger: (LedgerTxn & { code?: string })[];
  /** The latest accepted compliance check. */
  compliance?: { region: string; period: string };
  /** The latest accepted subtotal's amounts. */
  subtotal?: number[];
  reports: string[];
}

function legacyBackend(): { workflow: Workflow; state: LegacyAuditState } {
  const state: LegacyAuditState = { accountsListed: false, balancesRead: new Set(), transactionsRead: new Map(), ledger: ACME_LEDGER.map((t) => ({ ...t })), reports: [] };
  const d = LEGACY_DESCRIPTIONS;
  const workflow = legacyWorkflow("inconsistent_api_recovery_stateful", {
    legacy_list_accounts: defineTool({
      name: "legacy_list_accounts",
      description: d.legacy_list_accounts,
      parameters: LEGACY_PARAMS.list,
      execute: ({ page, page_size }) => {
        const out = accountListing(page, page_size);
        if (!out.startsWith("ERROR")) state.accountsListed = true;
        return out;
      },
    }),
    legacy_get_balance: defineTool({
      name: "legacy_get_balance",
      description: d.legacy_get_balance,
      parameters: LEGACY_PARAMS.account,
      execute: ({ account_id }) => {
        const id = account_id.trim();
        const out = accountIdError(id) ?? balanceLine(id);
        if (!out.startsWith("ERROR")) state.balancesRead.add(id);
        return out;
      },
    }),
    legacy_get_transactions: defineTool({
      name: "legacy_get_transactions",
      description: d.legacy_get_transactions,
      parameters: LEGACY_PARAMS.range,
      execute: ({ account_id, since, until }) => {
        const [a, s, u] = [account_id.trim(), since.trim(), until.trim()];
        const complaint = accountIdError(a) ?? dateRangeError(s, u);
        if (complaint) return complaint;
        state.transactionsRead.set(a, { since: s, until: u });
        return ledgerLines(a, s, u, state.ledger);
      },
    }),
    legacy_categorize_spend: defineTool({
      name: "legacy_categorize_spend",
      description: d.legacy_categorize_spend,
      parameters: LEGACY_PARAMS.categorize,
      execute: ({ txn_id, category }) => {
        const code = category.trim();
        const complaint = spendCodeError(code);
        if (complaint) return complaint;
        const row = state.ledger.find((t) => txnNumber(t.id) === txn_id);
        if (row) row.code = code;
        return categorized(txn_id, code, state.ledger);
      },
    }),
    legacy_check_compliance: defineTool({
      name: "legacy_check_compliance",
      description: d.legacy_check_compliance,
      parameters: LEGACY_PARAMS.compliance,
      execute: ({ region, period }) => {
        const [r, p] = [region.trim(), period.trim()];
        const complaint = regionError(r) ?? periodError(p);
        if (complaint) return complaint;
        state.compliance = { region: r, period: p };
        return complianceLine(r, p);
      },
    }),
    legacy_aggregate_subtotal: defineTool({
      name: "legacy_aggregate_subtotal",
      description: d.legacy_aggregate_subtotal,
      parameters: LEGACY_PARAMS.subtotal,
      execute: ({ amounts }) => {
        const parsed = parseAmounts(amounts);
        if ("error" in parsed) return parsed.error;
        state.subtotal = parsed.values;
        return `subtotal_usd=${sum(parsed.values).toFixed(2)} amounts_processed=${parsed.values.length}`;
      },
    }),
    legacy_submit_audit: defineTool({
      name: "legacy_submit_audit",
      description: d.legacy_submit_audit,
      parameters: LEGACY_PARAMS.submit,
      execute: ({ report }) => {
        state.reports.push(report);
        return "audit report filed";
      },
    }),
  });
  return { workflow, state };
}

/**
 * Every endpoint of the audit really ran, with accepted arguments, for the audited account and
 * quarter: the report alone could be right by luck or by skipping a step.
 *
 * @example legacyAuditDone(state) // false until the audit's seven steps have all run
 */
export function legacyAuditDone(state: LegacyAuditState): boolean {
  const range = state.transactionsRead.get(AUDIT_ACCOUNT);
  return (
    state.accountsListed &&
    state.balancesRead.has(AUDIT_ACCOUNT) &&
    range !== undefined && range.since <= Q4.since && range.until >= Q4.until &&
    state.ledger.some((t) => t.code !== undefined) &&
    state.compliance?.region === "us" && state.compliance.period === Q4.period &&
    state.subtotal !== undefined && Math.abs(sum(state.subtotal) - AUDIT_TOTAL_USD) < 0.005 &&
    state.reports.length === 1
  );
}

/**
 * Wrong conclusion the state catches: the model skips the compliance endpoint and reports PASS
 * anyway. The report reads right; the backend shows no check ran.
 */
const reportsUncheckedCompliance: Slip = {
  name: "reports_unchecked_compliance",
  rate: 0.04,
  when: (v) => answeredBy(v, "legacy_categorize_spend") !== undefined && answeredBy(v, "legacy_check_compliance") === undefined,
  step: (v) => {
    const seen = new Seen(v.results);
    const subtotal = answeredBy(v, "legacy_aggregate_subtotal");
    if (!subtotal) return { tool: "legacy_aggregate_subtotal", args: { amounts: dollars(seen) } };
    return { tool: "legacy_submit_audit", args: { report: auditReport(seen, seen.get("legacy_aggregate_subtotal", "subtotal_usd", "25500.00"), "PASS") } };
  },
};

export const inconsistentApiRecoveryStateful: EvalScenario = scenario<LegacyAuditState>({
  name: "inconsistent_api_recovery_stateful",
  description: "The legacy audit over a per-run backend: every endpoint must really have run with accepted arguments, and the report must match.",
  tags: ["stateful", "advanced", "reasoning"],
  userInput: LEGACY_USER_INPUT,
  idealIterations: 8,
  maxIterations: 20,
  budgetTokens: 8192,
  build: legacyBackend,
  validate: ({ args, state }) => auditReportValid(args.report) && legacyAuditDone(state),
  oracle: legacyOracle,
  slips: [totalsInCents(0.05), reportsUncheckedCompliance, stopsAtLegacyError],
});

// ── grounded_synthesis_stateful ─────────────────────────────────────────────────────────────

/** The hiring backend of one run: which records were read, and the decisions filed. */
export interface HiringState {
  roleRead: boolean;
  poolRead: boolean;
  skillsRead: Set<string>;
  compatibilityRead: Set<string>;
  teamRead: Set<string>;
  decisions: { candidate: string; rationale: string }[];
}

function hiringBackend(): { workflow: Workflow; state: HiringState } {
  const state: HiringState = { roleRead: false, poolRead: false, skillsRead: new Set(), compatibilityRead: new Set(), teamRead: new Set(), decisions: [] };
  const d = HIRING_DESCRIPTIONS;
  const p = HIRING_PARAMS;
  // Resolve, note the read in `seen`, and hand back the record (a miss throws before anything is noted).
  const read = (name: string, tool: string, seen: Set<string>): Candidate => {
    const record = candidateOf(name, tool);
    seen.add(resolveCandidate(name)!);
    return record;
  };
  const workflow = hiringWorkflow("grounded_synthesis_stateful", {
    get_open_role: defineTool({
      name: "get_open_role",
      description: d.get_open_role,
      parameters: p.none,
      execute: () => {
        state.roleRead = true;
        return OPEN_ROLE;
      },
    }),
    get_candidate_pool: defineTool({
      name: "get_candidate_pool",
      description: d.get_candidate_pool,
      parameters: p.none,
      execute: () => {
        state.poolRead = true;
        return poolListing();
      },
    }),
    get_skill_summary: defineTool({ name: "get_skill_summary", description: d.get_skill_summary, parameters: p.candidate, execute: ({ candidate_name }) => read(candidate_name, "get_skill_summary", state.skillsRead).skills }),
    get_compatibility_check: defineTool({
      name: "get_compatibility_check",
      description: d.get_compatibility_check,
      parameters: p.candidate,
      execute: ({ candidate_name }) => read(candidate_name, "get_compatibility_check", state.compatibilityRead).compatibility,
    }),
    get_team_dynamics: defineTool({ name: "get_team_dynamics", description: d.get_team_dynamics, parameters: p.candidate, execute: ({ candidate_name }) => read(candidate_name, "get_team_dynamics", state.teamRead).team }),
    submit_hiring_decision: defineTool({
      name: "submit_hiring_decision",
      description: d.submit_hiring_decision,
      parameters: p.decision,
      execute: ({ candidate, rationale }) => {
        state.decisions.push({ candidate, rationale });
        return `decision recorded: ${candidate}`;
      },
    }),
  });
  return { workflow, state };
}

/**
 * The decision was informed: the role and pool were read, the two front-runners' compatibility
 * checks (where their blockers are) were opened, and exactly one decision was filed.
 *
 * @example hiringGrounded(state) // false when Sarah Chen's compatibility check was never read
 */
export function hiringGrounded(state: HiringState): boolean {
  return state.roleRead && state.poolRead && state.compatibilityRead.has("Sarah Chen") && state.compatibilityRead.has("James Patel") && state.decisions.length === 1;
}

/**
 * Wrong conclusion the state catches: the model hires the right candidate from the pool
 * listing alone, naming the others it never checked. The words pass; no check was read.
 */
const guessesWithoutChecks: Slip = {
  name: "guesses_without_checks",
  rate: 0.1,
  when: (v) => {
    const seen = new Seen(v.results);
    return seen.successes("get_open_role").length > 0 && !seen.tried("get_compatibility_check") && !seen.tried("get_team_dynamics");
  },
  step: () => ({
    tool: "submit_hiring_decision",
    args: { candidate: PICK, rationale: "Aisha Nakamura's payments work at Square fits the role best; I passed over Sarah Chen and James Patel." },
  }),
};

export const groundedSynthesisStateful: EvalScenario = scenario<HiringState>({
  name: "grounded_synthesis_stateful",
  description: "The hiring decision over a per-run backend: the blockers' compatibility checks must really have been read, and one grounded decision filed.",
  tags: ["stateful", "advanced", "reasoning"],
  userInput: HIRING_USER_INPUT,
  idealIterations: 10,
  maxIterations: 20,
  budgetTokens: 8192,
  build: hiringBackend,
  validate: ({ args, state }) => hiringDecisionValid(args) && hiringGrounded(state),
  oracle: hiringOracle,
  slips: [picksTopScorer(0.35), overlooksTeamFit(0.2), guessesWithoutChecks],
});

/** @example ADVANCED_API.map((s) => s.name) // ["inconsistent_api_recovery", "grounded_synthesis", "inconsistent_api_recovery_stateful", "grounded_synthesis_stateful"] */
export const ADVANCED_API: EvalScenario[] = [inconsistentApiRecovery, groundedSynthesis, inconsistentApiRecoveryStateful, groundedSynthesisStateful];
