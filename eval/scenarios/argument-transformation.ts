/**
 * `argument_transformation`, of forge's advanced_reasoning family: an expense audit whose
 * terminal arguments are derived, not copied: EUR amounts converted before a $5,000-or-more
 * threshold, a vendor spelled in another case resolved to its approved master account, the
 * flagged set totalled. Its stateful pair logs what was read, converted and filed, and its
 * validation also asks that those steps were really done.
 */
import { z } from "zod";
import { defineTool, Workflow } from "../../src/core/index.js";
import { scenario, type EvalScenario, type Slip } from "../scenario.js";
import { planOracle, Seen, type PlanStep } from "./oracle-kit.js";


// ── argument_transformation ───────────────────────────────────────────────

const AT_SYSTEM_PROMPT =
  "You are an expense audit assistant. Work out which transactions to flag with the tools and submit one audit " +
  "report. Amounts can be in different currencies, and a vendor can be on record under more than one name.";

const AT_USER_INPUT =
  "Audit our Q4 2024 expenses. Flag every transaction of $5,000 or more whose vendor is not on our approved vendor " +
  "list, then submit the audit report with the flagged transaction IDs (comma-separated), their total in USD, and " +
  "the vendor of the largest flagged transaction.";

/** The fixed rate (no live lookup): 1 EUR = 1.10 USD. */
const EUR_USD = 1.1;
const THRESHOLD_USD = 5000;

interface Txn {
  id: string;
  date: string;
  vendor: string;
  amount: number;
  currency: "USD" | "EUR";
}

/**
 * Q4 2024. Flagged: TX-1001 (7,500), TX-1005 (exactly 5,000: "or more"), TX-1006 (4,800 EUR =
 * 5,280 USD) and TX-1008 (11,200, the largest): $28,980, top vendor Wonka Industries. Traps:
 * TX-1009's "ACME Corp" is the approved Acme Corp under another case; TX-1011 is EUR but under
 * the threshold once converted; TX-1004 is unapproved but small.
 */
const Q4_2024: readonly Txn[] = [
  { id: "TX-1001", date: "2024-10-05", vendor: "Cyberdyne LLC", amount: 7500, currency: "USD" },
  { id: "TX-1002", date: "2024-10-12", vendor: "Acme Corp", amount: 12000, currency: "USD" },
  { id: "TX-1003", date: "2024-10-22", vendor: "Initech Systems", amount: 8200, currency: "USD" },
  { id: "TX-1004", date: "2024-11-03", vendor: "Vandelay Imports", amount: 3500, currency: "USD" },
  { id: "TX-1005", date: "2024-11-08", vendor: "Soylent Corp", amount: 5000, currency: "USD" },
  { id: "TX-1006", date: "2024-11-14", vendor: "Pied Piper", amount: 4800, currency: "EUR" },
  { id: "TX-1007", date: "2024-11-22", vendor: "Umbrella Logistics", amount: 9400, currency: "USD" },
  { id: "TX-1008", date: "2024-12-02", vendor: "Wonka Industries", amount: 11200, currency: "USD" },
  { id: "TX-1009", date: "2024-12-08", vendor: "ACME Corp", amount: 6500, currency: "USD" },
  { id: "TX-1010", date: "2024-12-15", vendor: "Globex Industries", amount: 5500, currency: "USD" },
  { id: "TX-1011", date: "2024-12-19", vendor: "Pied Piper", amount: 2400, currency: "EUR" },
  { id: "TX-1012", date: "2024-12-22", vendor: "Stark Industries", amount: 14800, currency: "USD" },
  { id: "TX-1013", date: "2024-12-28", vendor: "Wayne Enterprises", amount: 7300, currency: "USD" },
];

const APPROVED_VENDORS: readonly string[] = ["Acme Corp", "Globex Industries", "Initech Systems", "Umbrella Logistics", "Wayne Enterprises", "Stark Industries"];

/** Trade-name aliases on file, alias → master account. */
const VENDOR_ALIASES: Readonly<Record<string, string>> = { "ACME Corp": "Acme Corp" };

const FLAGGED_IDS = ["TX-1001", "TX-1005", "TX-1006", "TX-1008"];

const money = (n: number) => n.toFixed(2);
const cents = (n: number) => Math.round(n * 100) / 100;

const ledgerText = (rows: readonly Txn[]) =>
  ["Q4 2024 expense transactions (amount in the currency billed):", ...rows.map((t) => `id=${t.id} date=${t.date} amount=${money(t.amount)} currency=${t.currency} vendor=${t.vendor}`)].join("\n");
const approvedText = (names: readonly string[]) => ["Approved vendors (master account names, case-sensitive):", ...names.map((n) => `- ${n}`)].join("\n");

function vendorText(name: string, approved: readonly string[], aliases: Readonly<Record<string, string>>): string {
  const master = aliases[name];
  if (master !== undefined) {
    return `vendor: ${name}\nstatus: registered trade-name alias (entities merged in 2023)\ncanonical_vendor: ${master}\nPurchases under this name bill to the ${master} master account under the same approval terms.`;
  }
  if (approved.includes(name)) {
    const own = Object.keys(aliases).filter((a) => aliases[a] === name);
    return `vendor: ${name}\nstatus: master account, active supplier${own.length > 0 ? `\ntrade-name aliases on file: ${own.join(", ")}` : ""}`;
  }
  return `vendor: ${name}\nstatus: not in the vendor master`;
}

/** forge answers an unsupported pair in text, not as an error; so do we (a bare run survives it). */
function convertText(amount: number, from: string, to: string): string {
  const src = from.trim().toUpperCase();
  const dst = to.trim().toUpperCase();
  const rate = `eur_usd_rate=${EUR_USD.toFixed(2)}`;
  if (src === "EUR" && dst === "USD") return `amount=${money(amount)} from=EUR converted=${money(cents(amount * EUR_USD))} to=USD ${rate}`;
  if (src === "USD" && dst === "EUR") return `amount=${money(amount)} from=USD converted=${money(cents(amount / EUR_USD))} to=EUR ${rate}`;
  if (src === dst) return `amount=${money(amount)} from=${src} converted=${money(amount)} to=${dst} (same currency)`;
  return `unsupported conversion ${src} -> ${dst}; supported: EUR <-> USD`;
}

/** A deterministic GL bucket for the categorisation distractor (no audit value). */
function glBucket(category: string): number {
  let h = 0;
  for (const ch of category) h = (h * 31 + ch.charCodeAt(0)) % 9000;
  return h + 1000;
}

const noArgs = z.object({});
const quarterArgs = z.object({ quarter: z.string().describe("Fiscal quarter, e.g. Q1"), year: z.number().int().describe("Fiscal year, e.g. 2023") });
const vendorArgs = z.object({ vendor_name: z.string().describe("Vendor name as recorded (case-sensitive)") });
const convertArgs = z.object({
  amount: z.number().describe("Amount to convert"),
  from_currency: z.string().describe("Source currency code, e.g. USD"),
  to_currency: z.string().describe("Target currency code, e.g. EUR"),
});
const categorizeArgs = z.object({ amount: z.number().describe("Expense amount"), category: z.string().describe("Expense category") });
const txnArgs = z.object({ transaction_id: z.string().describe("Transaction ID, e.g. TX-1234") });
const auditArgs = z.object({
  transaction_ids: z.string().describe("Comma-separated IDs of the flagged transactions"),
  total_flagged_usd: z.string().describe("Total of the flagged transactions in USD"),
  top_vendor: z.string().describe("Vendor of the single largest flagged transaction"),
});

const AT_TOOLS = {
  list_transactions: "List every expense transaction of a fiscal quarter and year.",
  get_approved_vendors: "The approved vendors' master account names (case-sensitive).",
  get_vendor_details: "A vendor's record: status, legal entity, trade-name aliases.",
  currency_convert: "Convert an amount between USD and EUR.",
  categorize_expense: "File an expense under a GL category bucket.",
  lookup_transaction: "One transaction's full record by ID.",
  submit_audit_report:
    "Submit the audit report: the flagged transaction IDs (comma-separated), their total in USD, and the vendor of the single largest flagged transaction.",
} as const;

const transactionRecord = (t: Txn) => `transaction id=${t.id} date=${t.date} amount=${money(t.amount)} currency=${t.currency} vendor=${t.vendor}`;
const categorizedText = (amount: number, category: string) => `filed ${money(amount)} under ${category} (GL-${glBucket(category)})`;

/**
 * forge's criteria: every flagged ID appears, the total reads 28,980 (with or without the
 * comma, "$" ignored), the top vendor names Wonka. An extra ID is not refused by itself, but
 * every wrong flagging rule also moves the total.
 */
function validAudit(args: Record<string, unknown>): boolean {
  const ids = String(args.transaction_ids ?? "");
  const total = String(args.total_flagged_usd ?? "").replaceAll("$", "");
  return FLAGGED_IDS.every((id) => ids.includes(id)) && (total.includes("28,980") || total.includes("28980")) && String(args.top_vendor ?? "").toLowerCase().includes("wonka");
}

/** How a model turns the data into flags: the correct rules, or one of the slips' wrong ones. */
interface FlagRules {
  /** Convert EUR at the rate seen, or take the EUR figure as dollars. */
  convert: boolean;
  /** Resolve a vendor through its alias record, or compare names literally. */
  resolveAliases: boolean;
  /** $5,000 or more, or strictly more. */
  inclusive: boolean;
}

const CORRECT_RULES: FlagRules = { convert: true, resolveAliases: true, inclusive: true };

const LEDGER_ROW = /^id=(\S+) date=(\S+) amount=([\d.]+) currency=([A-Z]{3}) vendor=(.+)$/;

/** The ledger rows of the latest successful list_transactions result (none before it). */
function seenLedger(seen: Seen): Txn[] {
  const latest = seen.successes("list_transactions").at(-1);
  if (!latest) return [];
  return latest.content.split("\n").flatMap((line) => {
    const m = LEDGER_ROW.exec(line.trim());
    return m ? [{ id: m[1]!, date: m[2]!, amount: Number(m[3]), currency: m[4] as Txn["currency"], vendor: m[5]!.trim() }] : [];
  });
}

function seenApproved(seen: Seen): Set<string> {
  const latest = seen.successes("get_approved_vendors").at(-1);
  return new Set(latest ? latest.content.split("\n").flatMap((l) => (l.startsWith("- ") ? [l.slice(2).trim()] : [])) : []);
}

/** alias → master account, from the vendor records read so far. */
function seenAliases(seen: Seen): Map<string, string> {
  const out = new Map<string, string>();
  for (const r of seen.successes("get_vendor_details")) {
    const vendor = /^vendor: (.+)$/m.exec(r.content)?.[1];
    const master = /^canonical_vendor: (.+)$/m.exec(r.content)?.[1];
    if (vendor && master) out.set(vendor.trim(), master.trim());
  }
  return out;
}

/**
 * The audit report the rules give over what has been seen. Before the data is in, the
 * fallbacks only shape a step the plan has not reached yet.
 */
function flaggedReport(seen: Seen, rules: FlagRules): Record<string, unknown> {
  const approved = seenApproved(seen);
  const aliases = rules.resolveAliases ? seenAliases(seen) : new Map<string, string>();
  const rate = rules.convert ? Number(seen.get("currency_convert", "eur_usd_rate", EUR_USD.toFixed(2))) : 1;
  const flagged = seenLedger(seen)
    .map((t) => ({ ...t, usd: cents(t.currency === "EUR" ? t.amount * rate : t.amount) }))
    .filter((t) => !approved.has(aliases.get(t.vendor) ?? t.vendor))
    .filter((t) => (rules.inclusive ? t.usd >= THRESHOLD_USD : t.usd > THRESHOLD_USD));
  const top = flagged.reduce<(typeof flagged)[number] | undefined>((best, t) => (best === undefined || t.usd > best.usd ? t : best), undefined);
  const total = flagged.reduce((sum, t) => sum + t.usd, 0);
  return {
    transaction_ids: flagged.map((t) => t.id).join(", "),
    total_flagged_usd: `$${cents(total).toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`,
    top_vendor: top?.vendor ?? "",
  };
}

/** One conversion gives the rate: the largest EUR amount, the one that could cross the threshold. */
function eurToConvert(seen: Seen): Record<string, unknown> {
  const eur = seenLedger(seen).filter((t) => t.currency === "EUR").map((t) => t.amount);
  return { amount: eur.length > 0 ? Math.max(...eur) : 4800, from_currency: "EUR", to_currency: "USD" };
}

/** The ledger vendor that is approved only if case is ignored: the one whose record to read. */
function nearMissVendor(seen: Seen): Record<string, unknown> {
  const approved = [...seenApproved(seen)];
  const vendor = seenLedger(seen)
    .map((t) => t.vendor)
    .find((v) => !approved.includes(v) && approved.some((a) => a.toLowerCase() === v.toLowerCase()));
  return { vendor_name: vendor ?? "ACME Corp" };
}

const AT_PLAN: PlanStep[] = [
  { tool: "list_transactions", args: () => ({ quarter: "Q4", year: 2024 }) },
  { tool: "get_approved_vendors", args: () => ({}) },
  { tool: "currency_convert", args: eurToConvert },
  { tool: "get_vendor_details", args: nearMissVendor },
  { tool: "submit_audit_report", args: (s) => flaggedReport(s, CORRECT_RULES) },
];

/**
 * The reasoning mistakes an 8B model makes here (forge's leaderboard: ~18% reforged, ~12%
 * bare): every one is a wrong flagging rule, so it files a wrong report whatever the guardrails.
 */
const AT_SLIPS: Slip[] = [
  {
    name: "skips_conversion",
    rate: 0.5,
    // Reads the vendor record but takes the EUR figures as dollars: TX-1006 falls under $5,000.
    when: (v) => new Seen(v.results).succeeded("get_approved_vendors") && !new Seen(v.results).tried("currency_convert"),
    step: (v) => {
      const seen = new Seen(v.results);
      if (!new Seen(v.results).tried("get_vendor_details")) return { tool: "get_vendor_details", args: nearMissVendor(seen) };
      return { tool: "submit_audit_report", args: flaggedReport(seen, { ...CORRECT_RULES, convert: false }) };
    },
  },
  {
    name: "literal_vendor_match",
    rate: 0.45,
    // Compares vendor names as strings: "ACME Corp" is not "Acme Corp", so TX-1009 is flagged too.
    when: (v) => new Seen(v.results).succeeded("currency_convert") && !new Seen(v.results).tried("get_vendor_details"),
    step: (v) => ({ tool: "submit_audit_report", args: flaggedReport(new Seen(v.results), { ...CORRECT_RULES, resolveAliases: false }) }),
  },
  {
    name: "strict_threshold",
    rate: 0.3,
    // Reads "$5,000 or more" as "more than $5,000": TX-1005, exactly $5,000, is left out.
    when: (v) => new Seen(v.results).succeeded("currency_convert") && new Seen(v.results).succeeded("get_vendor_details"),
    step: (v) => ({ tool: "submit_audit_report", args: flaggedReport(new Seen(v.results), { ...CORRECT_RULES, inclusive: false }) }),
  },
];

/** The distractor: it keeps no state, so the plain and the stateful workflow share it. */
function categorizeTool() {
  return defineTool({
    name: "categorize_expense",
    description: AT_TOOLS.categorize_expense,
    parameters: categorizeArgs,
    execute: ({ amount, category }) => categorizedText(amount, category.trim()),
  });
}

function atWorkflow(): Workflow {
  const tools = {
    list_transactions: defineTool({
      name: "list_transactions",
      description: AT_TOOLS.list_transactions,
      parameters: quarterArgs,
      execute: ({ quarter, year }) => (quarter.trim().toUpperCase() === "Q4" && year === 2024 ? ledgerText(Q4_2024) : `no transactions for ${quarter} ${year}`),
    }),
    get_approved_vendors: defineTool({ name: "get_approved_vendors", description: AT_TOOLS.get_approved_vendors, parameters: noArgs, execute: () => approvedText(APPROVED_VENDORS) }),
    get_vendor_details: defineTool({
      name: "get_vendor_details",
      description: AT_TOOLS.get_vendor_details,
      parameters: vendorArgs,
      execute: ({ vendor_name }) => vendorText(vendor_name.trim(), APPROVED_VENDORS, VENDOR_ALIASES),
    }),
    currency_convert: defineTool({
      name: "currency_convert",
      description: AT_TOOLS.currency_convert,
      parameters: convertArgs,
      execute: ({ amount, from_currency, to_currency }) => convertText(amount, from_currency, to_currency),
    }),
    categorize_expense: categorizeTool(),
    lookup_transaction: defineTool({
      name: "lookup_transaction",
      description: AT_TOOLS.lookup_transaction,
      parameters: txnArgs,
      execute: ({ transaction_id }) => {
        const t = Q4_2024.find((x) => x.id === transaction_id.trim());
        return t ? transactionRecord(t) : `no transaction "${transaction_id}"`;
      },
    }),
    submit_audit_report: defineTool({
      name: "submit_audit_report",
      description: AT_TOOLS.submit_audit_report,
      parameters: auditArgs,
      execute: (a) => `audit report filed: ${a.transaction_ids}; total ${a.total_flagged_usd}; top vendor ${a.top_vendor}`,
    }),
  };
  return new Workflow({
    name: "argument_transformation",
    description: "A Q4 expense audit whose flagged set, USD total and top vendor are derived from mixed-currency, aliased data.",
    tools,
    requiredSteps: ["list_transactions", "get_approved_vendors"],
    terminalTool: "submit_audit_report",
    systemPromptTemplate: AT_SYSTEM_PROMPT,
  });
}

/**
 * Five turns: list, approved vendors, one EUR conversion, the alias's record, the report.
 *
 * @example argumentTransformation.validate({ tool: "submit_audit_report", state: undefined,
 *   args: { transaction_ids: "TX-1001, TX-1005, TX-1006, TX-1008", total_flagged_usd: "$28,980.00", top_vendor: "Wonka Industries" } }) // true
 */
export const argumentTransformation: EvalScenario = scenario({
  name: "argument_transformation",
  description: "Derived arguments: filter by approval and a $5,000-or-more threshold after EUR conversion, resolve a vendor alias, total the flagged set.",
  tags: ["advanced", "reasoning"],
  userInput: AT_USER_INPUT,
  idealIterations: 5,
  maxIterations: 15,
  budgetTokens: 8192,
  build: () => ({ workflow: atWorkflow(), state: undefined }),
  validate: ({ args }) => validAudit(args),
  oracle: planOracle(AT_PLAN),
  slips: AT_SLIPS,
});

/**
 * The stateful expense system: its ledgers and vendor master (fresh per run) and what the run did with them.
 *
 * @example (build().state as ExpenseState).conversions // [{ amount: 4800, from: "EUR", to: "USD" }] after the conversion
 */
export interface ExpenseState {
  /** `${quarter} ${year}` → rows. */
  ledgers: Map<string, Txn[]>;
  approved: string[];
  aliases: Record<string, string>;
  /** Quarters listed, as `${quarter} ${year}`. */
  listed: string[];
  approvedReads: number;
  /** Vendor names looked up, as given. */
  vendorLookups: string[];
  conversions: { amount: number; from: string; to: string }[];
  filed: { transaction_ids: string; total_flagged_usd: string; top_vendor: string }[];
}

function atStatefulWorkflow(): { workflow: Workflow; state: ExpenseState } {
  const state: ExpenseState = {
    ledgers: new Map([["Q4 2024", Q4_2024.map((t) => ({ ...t }))]]),
    approved: [...APPROVED_VENDORS],
    aliases: { ...VENDOR_ALIASES },
    listed: [],
    approvedReads: 0,
    vendorLookups: [],
    conversions: [],
    filed: [],
  };
  const allRows = () => [...state.ledgers.values()].flat();
  const tools = {
    list_transactions: defineTool({
      name: "list_transactions",
      description: AT_TOOLS.list_transactions,
      parameters: quarterArgs,
      execute: ({ quarter, year }) => {
        const key = `${quarter.trim().toUpperCase()} ${year}`;
        const rows = state.ledgers.get(key);
        if (!rows) return `no transactions for ${quarter} ${year}`;
        state.listed.push(key);
        return ledgerText(rows);
      },
    }),
    get_approved_vendors: defineTool({
      name: "get_approved_vendors",
      description: AT_TOOLS.get_approved_vendors,
      parameters: noArgs,
      execute: () => {
        state.approvedReads++;
        return approvedText(state.approved);
      },
    }),
    get_vendor_details: defineTool({
      name: "get_vendor_details",
      description: AT_TOOLS.get_vendor_details,
      parameters: vendorArgs,
      execute: ({ vendor_name }) => {
        const name = vendor_name.trim();
        state.vendorLookups.push(name);
        return vendorText(name, state.approved, state.aliases);
      },
    }),
    currency_convert: defineTool({
      name: "currency_convert",
      description: AT_TOOLS.currency_convert,
      parameters: convertArgs,
      execute: ({ amount, from_currency, to_currency }) => {
        state.conversions.push({ amount, from: from_currency.trim().toUpperCase(), to: to_currency.trim().toUpperCase() });
        return convertText(amount, from_currency, to_currency);
      },
    }),
    categorize_expense: categorizeTool(),
    lookup_transaction: defineTool({
      name: "lookup_transaction",
      description: AT_TOOLS.lookup_transaction,
      parameters: txnArgs,
      execute: ({ transaction_id }) => {
        const t = allRows().find((x) => x.id === transaction_id.trim());
        return t ? transactionRecord(t) : `no transaction "${transaction_id}"`;
      },
    }),
    submit_audit_report: defineTool({
      name: "submit_audit_report",
      description: AT_TOOLS.submit_audit_report,
      parameters: auditArgs,
      execute: (a) => {
        state.filed.push({ ...a });
        return `audit report ${state.filed.length} filed: ${a.transaction_ids}; total ${a.total_flagged_usd}; top vendor ${a.top_vendor}`;
      },
    }),
  };
  const workflow = new Workflow({
    name: "argument_transformation_stateful",
    description: "A Q4 expense audit whose flagged set, USD total and top vendor are derived from mixed-currency, aliased data.",
    tools,
    requiredSteps: ["list_transactions", "get_approved_vendors"],
    terminalTool: "submit_audit_report",
    systemPromptTemplate: AT_SYSTEM_PROMPT,
  });
  return { workflow, state };
}

/**
 * The audit over a live ledger; the figures alone do not pass, the tool conversion and the alias lookup must be on record.
 *
 * @example argumentTransformationStateful.validate({ tool, args, state }) // false when 4,800 EUR was converted in the head
 */
export const argumentTransformationStateful: EvalScenario = scenario<ExpenseState>({
  name: "argument_transformation_stateful",
  description: "The expense audit over a live ledger: the EUR amount must be converted with the tool and the aliased vendor's record read, not guessed.",
  tags: ["stateful", "advanced", "reasoning"],
  userInput: AT_USER_INPUT,
  idealIterations: 5,
  maxIterations: 15,
  budgetTokens: 8192,
  build: atStatefulWorkflow,
  // As forge's state check: the right quarter listed, the approved list read, a EUR→USD
  // conversion made, the alias's record read, one report filed with the right figures.
  validate: ({ args, state }) =>
    validAudit(args) &&
    state.listed.includes("Q4 2024") &&
    state.approvedReads > 0 &&
    state.conversions.some((c) => c.from === "EUR" && c.to === "USD") &&
    state.vendorLookups.includes("ACME Corp") &&
    state.filed.length === 1 &&
    validAudit(state.filed[0]!),
  oracle: planOracle(AT_PLAN),
  slips: AT_SLIPS,
});
