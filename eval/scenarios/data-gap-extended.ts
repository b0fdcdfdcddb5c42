/**
 * `data_gap_recovery_extended`, of forge's advanced_reasoning family: five facts about one
 * employee spread over current, retired and archived HR systems, reached in two or three hops
 * with no tool named in the hints, past a stale archive (a lure with a plausible salary band)
 * and a security record whose access groups look complete but are the provisioned, not the
 * live, ones. Its stateful pair reads and logs per-run state with a decoy employee, and its
 * validation also asks that the right records were really read.
 */
import { z } from "zod";
import { defineTool, Workflow } from "../../src/core/index.js";
import { scenario, type EvalScenario, type Slip } from "../scenario.js";
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
    when: (v) => new Seen(v.results).succeeded("onboarding_records") && !new Seen(v.results).tried("compensation_v2"),
    step: (v) => {
      const seen = new Seen(v.results);
      if (!new Seen(v.results).tried("legacy_records")) return { tool: "legacy_records", args: idOf(seen) };
      return { tool: "submit_report", args: profileReport(seen, seen.get("legacy_records", "salary_band", LEGACY_BAND), seen.get("legacy_records", "access_groups", LEGACY_GROUPS)) };
    },
  },
  {
    name: "stale_access_groups",
    rate: 0.1,
    // The security record's groups look like an answer; the live ones are never looked for.
    when: (v) => new Seen(v.results).succeeded("compensation_v2") && !new Seen(v.results).tried("project_assignments"),
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
