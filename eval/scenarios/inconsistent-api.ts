/**
 * `inconsistent_api_recovery`, of forge's advanced_reasoning family: a compliance audit chained
 * through seven legacy endpoints that each break a different convention (prefixed ids, ISO
 * dates, cents vs dollars, upper vs lower case, a pipe separator), so what one error teaches is
 * wrong for the next. The stateful pair runs the same tools over a per-run backend that records
 * what was really done, so a right-looking report that skipped a step is still wrong.
 *
 * The legacy endpoints answer a convention violation with an `ERROR: ...` result instead of
 * throwing, as the API they imitate does: the model reads it and must change the call, and a
 * run without the runner's tool-error recovery (bare) survives it. A call that breaks the
 * declared argument types (a string `txn_id`) is refused by the runner's argument check.
 */
import { z } from "zod";
import { defineTool, Workflow } from "../../src/core/index.js";
import { scenario, type EvalScenario, type OracleView, type Slip } from "../scenario.js";
import { isSuccess, planOracle, Seen, unansweredTurns } from "./oracle-kit.js";

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
/**
 * Recoverable: the first legacy ERROR makes the model stop and explain instead of retrying.
 * A retry nudge (reforged) brings it back; without one (bare) the run ends there.
 */
const stopsAtLegacyError: Slip = {
  name: "stops_at_legacy_error",
  rate: 0.2,
  when: (v) => v.results.at(-1)?.content.startsWith("ERROR") === true && unansweredTurns(v) === 0,
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
