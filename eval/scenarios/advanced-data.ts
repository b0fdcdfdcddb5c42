/**
 * Advanced reasoning over data, as forge's `advanced_reasoning` family tests it:
 *
 * - `data_gap_recovery_extended`: five facts about one employee spread over current, retired
 *   and archived HR systems, reached in two or three hops with no tool named in the hints, past
 *   a stale archive (a lure with a plausible salary band) and a security record whose access
 *   groups look complete but are the provisioned, not the live, ones.
 * - `argument_transformation`: an expense audit whose terminal arguments are derived, not
 *   copied: EUR amounts converted before a $5,000-or-more threshold, a vendor spelled in another
 *   case resolved to its approved master account, the flagged set totalled.
 *
 * Each has a stateful pair whose tools read and log per-run state (with a decoy employee in the
 * HR one), and whose validation also asks that the right records were really read.
 */
import { z } from "zod";
import { defineTool, Workflow } from "../../src/core/index.js";
import { scenario, type EvalScenario, type OracleView, type Slip } from "../scenario.js";
import { planOracle, Seen, type PlanStep } from "./oracle-kit.js";

// ── data_gap_recovery_extended ────────────────────────────────────────────

const DGE_SYSTEM_PROMPT =
  "You are an HR records assistant. Gather what the request asks for with the tools and submit one complete " +
  "profile report. Some systems were migrated or retired: read every result, notes included, before trusting it.";

const DGE_USER_INPUT =
  "I need a complete profile of Sarah Chen for the onboarding audit and the access review: her clearance level, " +
  "her current emergency contact, her latest salary band and the access groups she has active today.";

/** One employee as every HR source knows them (the stateful form holds two; the plain form one). */
interface Employee {
  id: string;
  name: string;
  department: string;
  title: string;
  startDate: string;
  office: string;
  extension: string;
  manager: string;
  clearance: string;
  clearanceGranted: string;
  sponsor: string;
  lastReview: string;
  clearanceExpires: string;
  /** What was provisioned with the clearance: the soft trap, stale next to the live groups. */
  provisionedGroups: string;
  contact: string;
  contactRelation: string;
  contactPhone: string;
  dietary: string;
  band: string;
  bandEffective: string;
  bandReview: string;
  /** The live groups, only in the project assignments system. */
  activeGroups: string;
  primaryProject: string;
  secondaryProject: string;
}

const SARAH: Employee = {
  id: "E-1847",
  name: "Sarah Chen",
  department: "Engineering",
  title: "Senior Backend Engineer",
  startDate: "2019-03-15",
  office: "Building 3, Floor 2",
  extension: "x4481",
  manager: "David Park",
  clearance: "L3 Confidential",
  clearanceGranted: "2021-06-10",
  sponsor: "David Park",
  lastReview: "2024-12-01 passed",
  clearanceExpires: "2025-12-01",
  provisionedGroups: "payments-prod|internal-apis|staging-*",
  contact: "Michael Chen",
  contactRelation: "spouse",
  contactPhone: "555-867-5309",
  dietary: "none",
  band: "B7",
  bandEffective: "2024-04-01",
  bandReview: "2025-04-01",
  activeGroups: "payments-prod-v3|internal-apis-v2|staging-test",
  primaryProject: "Payments Platform Modernization",
  secondaryProject: "Internal Tooling Sprint",
};

/** The stateful form's decoy: another employee with a full, consistent set of records. */
const JAMES: Employee = {
  id: "E-2234",
  name: "James Liu",
  department: "Marketing",
  title: "Content Strategist",
  startDate: "2021-08-01",
  office: "Building 1, Floor 4",
  extension: "x5592",
  manager: "Maria Santos",
  clearance: "L1 Public",
  clearanceGranted: "2021-08-01",
  sponsor: "Maria Santos",
  lastReview: "2024-11-15 passed",
  clearanceExpires: "2026-08-01",
  provisionedGroups: "marketing-tools|cms-prod",
  contact: "Linda Liu",
  contactRelation: "mother",
  contactPhone: "555-234-5678",
  dietary: "vegetarian",
  band: "B4",
  bandEffective: "2024-08-01",
  bandReview: "2025-08-01",
  activeGroups: "marketing-tools-v2|cms-prod-v3",
  primaryProject: "Brand Refresh",
  secondaryProject: "Content Migration",
};

/** What the read-only archive still says about everyone: a band and groups frozen in 2024. */
const LEGACY_BAND = "B5";
const LEGACY_GROUPS = "legacy-readonly";

/** Spaces become underscores so a value stays one `key=value` token. */
const token = (s: string) => s.replaceAll(" ", "_").replaceAll(",", "");

// Each source's text. Facts are `key=value` tokens; hints are prose in domain words.
const employeeRecord = (e: Employee) =>
  `employee_id=${e.id} name=${token(e.name)} department=${e.department} title=${token(e.title)}\n` +
  `start_date=${e.startDate} office=${token(e.office)} manager=${token(e.manager)}\n` +
  "clearance_level=(restricted) emergency_contact=(not_kept_in_this_record) salary_band=(protected) access_groups=(managed_elsewhere)";
const securityRecord = (e: Employee) =>
  `security audit for employee_id=${e.id} name=${token(e.name)}\n` +
  `clearance_level=${token(e.clearance)} granted=${e.clearanceGranted} sponsor=${token(e.sponsor)} ` +
  `last_review=${token(e.lastReview)} expires=${e.clearanceExpires} access_groups=${e.provisionedGroups}`;
const personnelRecord = (id: string) =>
  `personnel file for employee_id=${id}: performance reviews and PTO balance.\n` +
  "Note: pay data moved to the current pay system in the 2024 migration.\n" +
  "Note: emergency contacts have been held with HR onboarding since the 2020 migration.";
const onboardingRecord = (e: Employee) =>
  `onboarding record for employee_id=${e.id} name=${token(e.name)} onboarded=${e.startDate}\n` +
  `emergency_contact=${token(e.contact)} relationship=${e.contactRelation} phone=${e.contactPhone} dietary=${e.dietary}`;
const compensationRecord = (e: Employee) =>
  `current pay system, employee_id=${e.id} salary_band=${e.band} effective=${e.bandEffective} next_review=${e.bandReview}`;
const assignmentsRecord = (e: Employee) =>
  `project assignments for employee_id=${e.id} active_access_groups=${e.activeGroups}\n` +
  `primary_project=${token(e.primaryProject)} secondary_project=${token(e.secondaryProject)}`;
const COMPENSATION_HISTORY_RETIRED = "compensation_history was retired in 2024 and holds no current data. Current salary bands: compensation_v2.";
const ACCESS_CONTROL_RETIRED =
  "access_control was retired. Live access-group membership now comes from project_assignments; " +
  "security_audit only keeps the groups provisioned when the clearance was granted.";
const legacyRecord = (id: string) =>
  `legacy_v1 archive (read-only, not synced since the 2024 migration), employee_id=${id}\n` +
  `salary_band=${LEGACY_BAND} access_groups=${LEGACY_GROUPS}\n` +
  "Note: kept for historical audits only. Current salary band: compensation_v2. Current access groups: project_assignments.";
const complianceRecord = (id: string) =>
  `compliance for employee_id=${id}: mandatory_training=complete last_security_awareness=2024-11-15 open_items=0`;
const directoryRecord = (e: Employee) =>
  `directory entry name=${token(e.name)} department=${e.department} reports_to=${token(e.manager)} ` +
  `office=${token(e.office)} extension=${e.extension} status=active`;

const byId = z.object({ employee_id: z.string().describe("The employee's ID, e.g. E-1234") });
const byName = z.object({ name: z.string().describe("The employee's full name") });
const reportArgs = z.object({ employee_name: z.string().describe("The employee's full name"), report: z.string().describe("The complete profile report") });

/** The HR sources, in one place so the plain and stateful tools describe them alike. */
const HR_TOOLS = {
  get_employee: "Look an employee's record up by name.",
  security_audit: "Security audit records of an employee.",
  onboarding_records: "HR onboarding records of an employee.",
  personnel_file: "An employee's personnel file.",
  compensation_v2: "The current compensation system: salary band lookup.",
  project_assignments: "An employee's current project assignments and active access groups.",
  compensation_history: "Compensation history of an employee.",
  access_control: "Access control entries of an employee.",
  legacy_records: "Search the legacy records archive for an employee.",
  compliance_check: "Compliance status of an employee.",
  hr_directory: "Look an employee up in the HR directory.",
  submit_report: "Submit the finished employee profile report.",
} as const;

/** The report's facts, lowercased and checked by substring as forge does (either clearance word; contact name plus phone or relation). */
function validProfile(args: Record<string, unknown>): boolean {
  const text = `${String(args.employee_name ?? "")} ${String(args.report ?? "")}`.toLowerCase();
  return (
    text.includes("engineering") &&
    (text.includes("l3") || text.includes("confidential")) &&
    text.includes("michael") &&
    (text.includes("867-5309") || text.includes("spouse")) &&
    // B7 only comes from compensation_v2 (the archive says B5).
    text.includes("b7") &&
    // The versioned names only come from project_assignments (the security record lacks the suffixes).
    (text.includes("payments-prod-v3") || text.includes("internal-apis-v2"))
  );
}

/**
 * The profile report from what has been seen, with the salary band and access groups passed in
 * so a slip can take them from the wrong source.
 */
function profileReport(seen: Seen, band: string, groups: string): Record<string, unknown> {
  const spaced = (s: string) => s.replaceAll("_", " ");
  const id = seen.get("get_employee", "employee_id", SARAH.id);
  const contact = `${spaced(seen.get("onboarding_records", "emergency_contact", token(SARAH.contact)))} (${seen.get("onboarding_records", "relationship", SARAH.contactRelation)}), ${seen.get("onboarding_records", "phone", SARAH.contactPhone)}`;
  const report = [
    `${SARAH.name} (${id}), ${seen.get("get_employee", "department", SARAH.department)}, ${spaced(seen.get("get_employee", "title", token(SARAH.title)))}.`,
    `Clearance level: ${spaced(seen.get("security_audit", "clearance_level", token(SARAH.clearance)))}.`,
    `Emergency contact: ${contact}.`,
    `Salary band: ${band}.`,
    `Active access groups: ${groups.split("|").join(", ")}.`,
  ].join(" ");
  return { employee_name: SARAH.name, report };
}

const idOf = (s: Seen) => ({ employee_id: s.get("get_employee", "employee_id", SARAH.id) });

/** The shortest correct path: eight turns, the groups reached through the retired access system's redirect. */
const DGE_PLAN: PlanStep[] = [
  { tool: "get_employee", args: () => ({ name: SARAH.name }) },
  { tool: "security_audit", args: idOf },
  { tool: "personnel_file", args: idOf },
  { tool: "onboarding_records", args: idOf },
  { tool: "compensation_v2", args: idOf },
  { tool: "access_control", args: idOf },
  { tool: "project_assignments", args: idOf },
  {
    tool: "submit_report",
    args: (s) => profileReport(s, s.get("compensation_v2", "salary_band", SARAH.band), s.get("project_assignments", "active_access_groups", SARAH.activeGroups)),
  },
];

const done = (v: OracleView, tool: string) => new Seen(v.results).successes(tool).length > 0;
const tried = (v: OracleView, tool: string) => new Seen(v.results).tried(tool);

/**
 * The skill mistakes an 8B model makes here (forge's leaderboard: ~76% reforged): it believes
 * the archive over its own redirect note, or it stops at the provisioned access groups. Both
 * are wrong conclusions, so guardrails cannot help.
 */
const DGE_SLIPS: Slip[] = [
  {
    name: "takes_legacy_lure",
    rate: 0.15,
    // With the contact in hand it goes to the archive for the band and groups, and stays there.
    when: (v) => done(v, "onboarding_records") && !tried(v, "compensation_v2"),
    step: (v) => {
      const seen = new Seen(v.results);
      if (!tried(v, "legacy_records")) return { tool: "legacy_records", args: idOf(seen) };
      return { tool: "submit_report", args: profileReport(seen, seen.get("legacy_records", "salary_band", LEGACY_BAND), seen.get("legacy_records", "access_groups", LEGACY_GROUPS)) };
    },
  },
  {
    name: "stale_access_groups",
    rate: 0.1,
    // The security record's groups look like an answer; the live ones are never looked for.
    when: (v) => done(v, "compensation_v2") && !tried(v, "project_assignments"),
    step: (v) => {
      const seen = new Seen(v.results);
      return { tool: "submit_report", args: profileReport(seen, seen.get("compensation_v2", "salary_band", SARAH.band), seen.get("security_audit", "access_groups", SARAH.provisionedGroups)) };
    },
  },
];

function dgeWorkflow(): Workflow {
  // forge's plain form holds one employee, so every lookup answers with hers whatever the key.
  const e = SARAH;
  const lookup = (name: keyof typeof HR_TOOLS, text: () => string) =>
    defineTool({ name, description: HR_TOOLS[name], parameters: byId, execute: () => text() });
  return new Workflow({
    name: "data_gap_recovery_extended",
    description: "A complete employee profile resolved across current, retired and archived HR systems.",
    tools: {
      get_employee: defineTool({ name: "get_employee", description: HR_TOOLS.get_employee, parameters: byName, execute: () => employeeRecord(e) }),
      security_audit: lookup("security_audit", () => securityRecord(e)),
      onboarding_records: lookup("onboarding_records", () => onboardingRecord(e)),
      personnel_file: lookup("personnel_file", () => personnelRecord(e.id)),
      compensation_v2: lookup("compensation_v2", () => compensationRecord(e)),
      project_assignments: lookup("project_assignments", () => assignmentsRecord(e)),
      compensation_history: lookup("compensation_history", () => COMPENSATION_HISTORY_RETIRED),
      access_control: lookup("access_control", () => ACCESS_CONTROL_RETIRED),
      legacy_records: lookup("legacy_records", () => legacyRecord(e.id)),
      compliance_check: lookup("compliance_check", () => complianceRecord(e.id)),
      hr_directory: defineTool({ name: "hr_directory", description: HR_TOOLS.hr_directory, parameters: byName, execute: () => directoryRecord(e) }),
      submit_report: defineTool({ name: "submit_report", description: HR_TOOLS.submit_report, parameters: reportArgs, execute: ({ employee_name }) => `report filed for ${employee_name}` }),
    },
    requiredSteps: ["get_employee"],
    terminalTool: "submit_report",
    systemPromptTemplate: DGE_SYSTEM_PROMPT,
  });
}

/**
 * Eight turns over twelve HR tools: the report must carry B7 and the -v3/-v2 groups, which only
 * the current systems hold.
 *
 * @example (await playOracle(dataGapRecoveryExtended)).turns // 8
 */
export const dataGapRecoveryExtended: EvalScenario = scenario({
  name: "data_gap_recovery_extended",
  description: "Five facts over 2-3 hop chains with no tool named in the hints, past a stale archive, retired endpoints and provisioned-not-live access groups.",
  tags: ["advanced", "reasoning"],
  userInput: DGE_USER_INPUT,
  idealIterations: 8,
  maxIterations: 20,
  budgetTokens: 8192,
  build: () => ({ workflow: dgeWorkflow(), state: undefined }),
  validate: ({ args }) => validProfile(args),
  oracle: planOracle(DGE_PLAN),
  slips: DGE_SLIPS,
});

/** The sources the stateful HR system logs reads of (the ones the profile needs, and the lure). */
type HrSource = "security_audit" | "onboarding_records" | "compensation_v2" | "project_assignments" | "legacy_records";

/**
 * The stateful HR system: its employees (fresh per run) and what the run read and filed.
 *
 * @example (build().state as HrState).reads.compensation_v2 // ["E-1847"] once Sarah's band was read
 */
export interface HrState {
  employees: Map<string, Employee>;
  /** Names get_employee resolved, lowercased. */
  lookedUp: string[];
  /** Employee ids read per source, in call order. */
  reads: Record<HrSource, string[]>;
  filed: { employee_name: string; report: string }[];
}

/** The four reads the profile needs: Sarah's record from each current source. */
const NEEDED_READS: HrSource[] = ["security_audit", "onboarding_records", "compensation_v2", "project_assignments"];

function dgeStatefulWorkflow(): { workflow: Workflow; state: HrState } {
  const state: HrState = {
    employees: new Map([SARAH, JAMES].map((e) => [e.id, { ...e }])),
    lookedUp: [],
    reads: { security_audit: [], onboarding_records: [], compensation_v2: [], project_assignments: [], legacy_records: [] },
    filed: [],
  };
  const byNameOf = (name: string) => [...state.employees.values()].find((e) => e.name.toLowerCase() === name.trim().toLowerCase());
  /** A source keyed by id: logs the read when it resolves, answers "no record" (text, as forge) when not. */
  const source = (name: keyof typeof HR_TOOLS, render: (e: Employee) => string, log?: HrSource) =>
    defineTool({
      name,
      description: HR_TOOLS[name],
      parameters: byId,
      execute: ({ employee_id }) => {
        const e = state.employees.get(employee_id.trim());
        if (!e) return `${name}: no record for employee_id "${employee_id}"`;
        if (log) state.reads[log].push(e.id);
        return render(e);
      },
    });
  const workflow = new Workflow({
    name: "data_gap_recovery_extended_stateful",
    description: "A complete employee profile resolved across current, retired and archived HR systems.",
    tools: {
      get_employee: defineTool({
        name: "get_employee",
        description: HR_TOOLS.get_employee,
        parameters: byName,
        execute: ({ name }) => {
          const e = byNameOf(name);
          if (!e) return `get_employee: no employee named "${name}"`;
          state.lookedUp.push(e.name.toLowerCase());
          return employeeRecord(e);
        },
      }),
      security_audit: source("security_audit", securityRecord, "security_audit"),
      onboarding_records: source("onboarding_records", onboardingRecord, "onboarding_records"),
      personnel_file: source("personnel_file", (e) => personnelRecord(e.id)),
      compensation_v2: source("compensation_v2", compensationRecord, "compensation_v2"),
      project_assignments: source("project_assignments", assignmentsRecord, "project_assignments"),
      compensation_history: source("compensation_history", () => COMPENSATION_HISTORY_RETIRED),
      access_control: source("access_control", () => ACCESS_CONTROL_RETIRED),
      legacy_records: source("legacy_records", (e) => legacyRecord(e.id), "legacy_records"),
      compliance_check: source("compliance_check", (e) => complianceRecord(e.id)),
      hr_directory: defineTool({
        name: "hr_directory",
        description: HR_TOOLS.hr_directory,
        parameters: byName,
        execute: ({ name }) => {
          const e = byNameOf(name);
          return e ? directoryRecord(e) : `hr_directory: no entry for "${name}"`;
        },
      }),
      submit_report: defineTool({
        name: "submit_report",
        description: HR_TOOLS.submit_report,
        parameters: reportArgs,
        execute: (args) => {
          state.filed.push({ ...args });
          return `report ${state.filed.length} filed for ${args.employee_name}`;
        },
      }),
    },
    requiredSteps: ["get_employee"],
    terminalTool: "submit_report",
    systemPromptTemplate: DGE_SYSTEM_PROMPT,
  });
  return { workflow, state };
}

/**
 * The extended chain over a live HR system with a decoy employee (James Liu, E-2234).
 *
 * @example dataGapRecoveryExtendedStateful.validate({ tool: "submit_report", args, state }) // false unless Sarah's four current records were read
 */
export const dataGapRecoveryExtendedStateful: EvalScenario = scenario<HrState>({
  name: "data_gap_recovery_extended_stateful",
  description: "The extended hint chain over a live HR system with a decoy employee; Sarah's records must really be read from each current source.",
  tags: ["stateful", "advanced", "reasoning"],
  userInput: DGE_USER_INPUT,
  idealIterations: 8,
  maxIterations: 20,
  budgetTokens: 8192,
  build: dgeStatefulWorkflow,
  validate: ({ args, state }) =>
    validProfile(args) && state.lookedUp.includes("sarah chen") && NEEDED_READS.every((s) => state.reads[s].includes(SARAH.id)) && state.filed.length === 1,
  oracle: planOracle(DGE_PLAN),
  slips: DGE_SLIPS,
});

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
    when: (v) => done(v, "get_approved_vendors") && !tried(v, "currency_convert"),
    step: (v) => {
      const seen = new Seen(v.results);
      if (!tried(v, "get_vendor_details")) return { tool: "get_vendor_details", args: nearMissVendor(seen) };
      return { tool: "submit_audit_report", args: flaggedReport(seen, { ...CORRECT_RULES, convert: false }) };
    },
  },
  {
    name: "literal_vendor_match",
    rate: 0.45,
    // Compares vendor names as strings: "ACME Corp" is not "Acme Corp", so TX-1009 is flagged too.
    when: (v) => done(v, "currency_convert") && !tried(v, "get_vendor_details"),
    step: (v) => ({ tool: "submit_audit_report", args: flaggedReport(new Seen(v.results), { ...CORRECT_RULES, resolveAliases: false }) }),
  },
  {
    name: "strict_threshold",
    rate: 0.3,
    // Reads "$5,000 or more" as "more than $5,000": TX-1005, exactly $5,000, is left out.
    when: (v) => done(v, "currency_convert") && done(v, "get_vendor_details"),
    step: (v) => ({ tool: "submit_audit_report", args: flaggedReport(new Seen(v.results), { ...CORRECT_RULES, inclusive: false }) }),
  },
];

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
    categorize_expense: defineTool({
      name: "categorize_expense",
      description: AT_TOOLS.categorize_expense,
      parameters: categorizeArgs,
      execute: ({ amount, category }) => categorizedText(amount, category.trim()),
    }),
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
    categorize_expense: defineTool({
      name: "categorize_expense",
      description: AT_TOOLS.categorize_expense,
      parameters: categorizeArgs,
      execute: ({ amount, category }) => categorizedText(amount, category.trim()),
    }),
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

/**
 * The family in report order: plain first, then stateful.
 *
 * @example ADVANCED_DATA.map((s) => s.name) // ["data_gap_recovery_extended", "argument_transformation", "data_gap_recovery_extended_stateful", "argument_transformation_stateful"]
 */
export const ADVANCED_DATA: EvalScenario[] = [dataGapRecoveryExtended, argumentTransformation, dataGapRecoveryExtendedStateful, argumentTransformationStateful];
