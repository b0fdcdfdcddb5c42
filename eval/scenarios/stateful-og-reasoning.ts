/**
 * Stateful reasoning scenarios, after forge's: an incident triage where the service argument
 * picks between the real incident and a harmless decoy and the cause is only in the
 * deployment record, and an HR profile whose data sits behind hints and a dead end, with a
 * decoy employee on file. Validation checks the conclusion and which records were read.
 */
import { z } from "zod";
import { defineTool, Workflow } from "../../src/core/index.js";
import { scenario, type EvalScenario } from "../scenario.js";
import { planOracle, Seen, type PlanStep } from "./oracle-kit.js";
import { answered, fieldOf, mentionsAll, mentionsAny, noTextReplyYet, wrongPath } from "./stateful-og-kit.js";

// ── conditional_routing_stateful: incident triage ─────────────────────────

interface ServiceRecord {
  alert: string;
  metrics: string;
  logs: string;
  deployment: string;
}

const SERVICES: Record<string, ServiceRecord> = {
  "payments-service": {
    alert: [
      "Alert: P1-8842 on payments-service",
      "Triggered: 2025-01-15 14:23:07 UTC",
      "Type: error rate above threshold",
      "Error rate: 12.4% (threshold 2%)",
      "Endpoint: /api/v2/charge",
      "Open for: 18 minutes",
      "Last deploy: 2025-01-15 14:04:51 UTC",
      "Previous alert: 2024-11-03, resolved (database connection pool)",
    ].join("\n"),
    metrics: [
      "Metrics for payments-service, last 60 minutes (time: error rate, p99 latency, cpu, memory):",
      "14:00: 0.3%, 120ms, 45%, 62%",
      "14:05: 0.4%, 118ms, 44%, 61%",
      "14:10: 8.1%, 940ms, 47%, 63%",
      "14:15: 11.2%, 1850ms, 51%, 64%",
      "14:20: 12.4%, 2100ms, 52%, 65%",
      "14:25: 12.1%, 2040ms, 50%, 64%",
      "Observation: errors jump between 14:05 and 14:10; cpu and memory barely move; latency follows the error rate.",
    ].join("\n"),
    logs: [
      "Logs for payments-service, last 30 minutes:",
      "14:08:12 WARN  HttpClient retrying upstream call (1)",
      "14:08:15 WARN  HttpClient retrying upstream call (2)",
      "14:09:01 ERROR PaymentProcessor transaction failed: unexpected response format",
      "14:09:03 ERROR PaymentProcessor transaction failed: unexpected response format",
      "14:11:44 WARN  ConnectionPool at 78% utilization",
      "14:14:22 ERROR PaymentProcessor transaction failed: unexpected response format",
      "14:18:33 WARN  HttpClient retrying upstream call (1)",
      "(247 more entries like these)",
    ].join("\n"),
    deployment: [
      "Deploy: deploy-a7f3e2",
      "Deployed at: 2025-01-15 14:04:51 UTC",
      "By: jenkins-ci, after merging PR #1147",
      "Change: payment gateway SDK upgraded from v3.8.1 to v4.0.0",
      "Release note: v4.0.0 breaks compatibility: the response schema changed and transaction_id moved from the top level to data.transaction_id",
      "Rollback target: deploy-b82c1a (v3.8.1)",
    ].join("\n"),
  },
  // The decoy: a short latency blip that cleared itself, with a harmless week-old deploy.
  "auth-service": {
    alert: [
      "Alert: P2-3317 on auth-service",
      "Triggered: 2025-01-14 09:15:00 UTC",
      "Type: latency above threshold",
      "Error rate: 0.8% (latency threshold 500ms)",
      "Endpoint: /api/v1/login",
      "Open for: 5 minutes",
      "Last deploy: 2025-01-10 11:00:00 UTC",
      "Previous alert: 2024-12-20, resolved (rate limiter tuning)",
    ].join("\n"),
    metrics: [
      "Metrics for auth-service, last 60 minutes (time: error rate, p99 latency, cpu, memory):",
      "09:10: 0.1%, 80ms, 30%, 45%",
      "09:15: 0.8%, 620ms, 32%, 46%",
      "09:20: 0.2%, 95ms, 30%, 45%",
      "Observation: one latency spike at 09:15, gone within 5 minutes.",
    ].join("\n"),
    logs: [
      "Logs for auth-service, last 30 minutes:",
      "09:14:55 WARN  RateLimiter login attempts spiking from 10.0.3.0/24",
      "09:15:01 WARN  RateLimiter throttling on",
      "09:15:42 INFO  RateLimiter throttling off, traffic normal",
      "(3 entries in total)",
    ].join("\n"),
    deployment: [
      "Deploy: deploy-c4d9f1",
      "Deployed at: 2025-01-10 11:00:00 UTC",
      "By: jenkins-ci, after merging PR #1098",
      "Change: logging library upgraded to v2.1.0",
      "Rollback target: deploy-d1e2a3",
    ].join("\n"),
  },
};

/**
 * The service a name means, forgiving the way people write it ("payments", "the payments
 * service", "Payments-Service"), or undefined.
 */
function serviceKey(service: string): string | undefined {
  const bare = service.trim().toLowerCase().replace(/^the\s+/, "").replace(/[\s-]*service$/, "").trim();
  const key = `${bare}-service`;
  return key in SERVICES ? key : undefined;
}

interface TriageState {
  /** Service key each tool last served. */
  alertChecked: string | undefined;
  metricsChecked: string | undefined;
  logsChecked: string | undefined;
  deploymentChecked: string | undefined;
}

type TriageField = "alert" | "metrics" | "logs" | "deployment";

function triageWorkflow(): { workflow: Workflow; state: TriageState } {
  const state: TriageState = { alertChecked: undefined, metricsChecked: undefined, logsChecked: undefined, deploymentChecked: undefined };
  const serviceTool = (name: string, description: string, field: TriageField, mark: (key: string) => void) =>
    defineTool({
      name,
      description,
      parameters: z.object({ service: z.string().describe("Name of the service") }),
      execute: ({ service }) => {
        const key = serviceKey(service);
        if (!key) return `No ${field} data for a service called "${service}".`;
        mark(key);
        return SERVICES[key]![field];
      },
    });
  const diagnose = defineTool({
    name: "diagnose",
    description: "Submit the root cause and the action you recommend.",
    parameters: z.object({
      diagnosis: z.string().describe("The root cause"),
      action: z.string().describe("The recommended action"),
    }),
    execute: ({ diagnosis, action }) => `Diagnosis: ${diagnosis}\nAction: ${action}`,
  });
  const workflow = new Workflow({
    name: "conditional_routing_stateful",
    tools: {
      get_alert: serviceTool("get_alert", "The open P1 alert on a service.", "alert", (k) => (state.alertChecked = k)),
      check_metrics: serviceTool("check_metrics", "A service's system metrics over time.", "metrics", (k) => (state.metricsChecked = k)),
      check_logs: serviceTool("check_logs", "A service's recent log entries.", "logs", (k) => (state.logsChecked = k)),
      check_deployment: serviceTool("check_deployment", "The latest deployment to a service.", "deployment", (k) => (state.deploymentChecked = k)),
      diagnose,
    },
    requiredSteps: ["get_alert", "check_metrics"],
    terminalTool: "diagnose",
    systemPromptTemplate:
      "You respond to infrastructure incidents. Investigate the P1 alert with the tools, find its root cause, and call diagnose with the cause and the action once the evidence shows it.",
  });
  return { workflow, state };
}

const triageSteps = (service: string): PlanStep[] => [
  { tool: "get_alert", args: () => ({ service }) },
  { tool: "check_metrics", args: () => ({ service }) },
  { tool: "check_deployment", args: () => ({ service }) },
  {
    tool: "diagnose",
    args: (s) => ({
      diagnosis: `${fieldOf(s, "check_deployment", "Deploy")} at ${fieldOf(s, "check_deployment", "Deployed at")} (${fieldOf(s, "check_deployment", "Change")}) came just before the errors began. ${fieldOf(s, "check_deployment", "Release note")}.`,
      action: `Roll back to ${fieldOf(s, "check_deployment", "Rollback target")}.`,
    }),
  },
];

export const conditionalRoutingStateful: EvalScenario = scenario<TriageState>({
  name: "conditional_routing_stateful",
  description: "Correlate a P1 alert, the metrics and the last deployment of the right service (a decoy service is on file) into a cause and a rollback.",
  tags: ["stateful", "model_quality", "reasoning"],
  userInput: "The payments service just fired a P1 alert. Find the root cause and tell us what to do.",
  idealIterations: 4,
  maxIterations: 15,
  budgetTokens: 8192,
  build: triageWorkflow,
  validate: ({ args, state }) => {
    const text = `${String(args.diagnosis)} ${String(args.action)}`;
    return (
      mentionsAny(text, ["v4.0.0", "sdk", "gateway"]) &&
      mentionsAny(text, ["rollback", "revert", "roll back"]) &&
      mentionsAny(text, ["response", "schema", "transaction_id"]) &&
      state.alertChecked === "payments-service" &&
      state.metricsChecked === "payments-service" &&
      state.deploymentChecked === "payments-service"
    );
  },
  oracle: planOracle(triageSteps("payments-service")),
  slips: [
    {
      // Diagnoses from the alert alone, on the last incident's cause: the step nudge sends it to the metrics.
      name: "diagnoses_from_the_alert",
      rate: 0.1,
      when: (v) => answered(v, "get_alert") && !new Seen(v.results).tried("check_metrics") && !new Seen(v.results).tried("diagnose"),
      step: () => ({
        tool: "diagnose",
        args: { diagnosis: "Error spike on /api/v2/charge, like the last database connection pool incident.", action: "Restart the database connection pool." },
      }),
    },
    // Never looks at the deployment: blames the upstream from the logs.
    wrongPath("skips_the_deployment", 0.02, [
      { tool: "get_alert", args: () => ({ service: "payments-service" }) },
      { tool: "check_metrics", args: () => ({ service: "payments-service" }) },
      { tool: "check_logs", args: () => ({ service: "payments-service" }) },
      {
        tool: "diagnose",
        args: () => ({ diagnosis: "Upstream calls fail with an unexpected format since about 14:08.", action: "Escalate to the upstream provider and keep monitoring." }),
      },
    ]),
    wrongPath("decoy_service", 0.01, triageSteps("auth-service")),
  ],
});

// ── data_gap_recovery_stateful: an HR profile behind hints and a dead end ──

interface Employee {
  name: string;
  employeeId: string;
  department: string;
  title: string;
  started: string;
  office: string;
  extension: string;
  manager: string;
  clearance: string;
  clearanceGranted: string;
  sponsor: string;
  lastReview: string;
  clearanceExpires: string;
  accessGroups: string;
  emergencyContact: string;
  dietary: string;
  shirtSize: string;
  equipment: string;
}

const EMPLOYEES: Employee[] = [
  {
    name: "Sarah Chen", employeeId: "E-1847", department: "Engineering", title: "Senior Backend Engineer", started: "2019-03-15",
    office: "Building 3, Floor 2", extension: "x4481", manager: "David Park",
    clearance: "L3 (Confidential)", clearanceGranted: "2021-06-10", sponsor: "David Park, Director of Engineering",
    lastReview: "2024-12-01, passed without findings", clearanceExpires: "2025-12-01", accessGroups: "payments-prod, internal-apis, staging-*",
    emergencyContact: "Michael Chen (spouse), (555) 867-5309", dietary: "none", shirtSize: "M", equipment: 'MacBook Pro 16", two monitors',
  },
  // The decoy: another employee whose id leads to another clearance and another contact.
  {
    name: "James Liu", employeeId: "E-2234", department: "Marketing", title: "Content Strategist", started: "2021-08-01",
    office: "Building 1, Floor 4", extension: "x5592", manager: "Maria Santos",
    clearance: "L1 (Public)", clearanceGranted: "2021-08-01", sponsor: "Maria Santos, VP of Marketing",
    lastReview: "2024-11-15, passed without findings", clearanceExpires: "2026-08-01", accessGroups: "marketing-tools, cms-prod",
    emergencyContact: "Linda Liu (mother), (555) 234-5678", dietary: "vegetarian", shirtSize: "L", equipment: 'MacBook Pro 14", one monitor',
  },
];

const byName = (name: string): Employee | undefined => EMPLOYEES.find((e) => e.name.toLowerCase() === name.trim().toLowerCase());
const byId = (id: string): Employee | undefined => EMPLOYEES.find((e) => e.employeeId === id.trim());

interface HrState {
  /** Name of the employee the last successful record lookup found. */
  employeeLookedUp: string | undefined;
  /** Employee id whose security audit / onboarding record was last served. */
  securityFetched: string | undefined;
  onboardingFetched: string | undefined;
}

function hrWorkflow(): { workflow: Workflow; state: HrState } {
  const state: HrState = { employeeLookedUp: undefined, securityFetched: undefined, onboardingFetched: undefined };
  const idParam = z.object({ employee_id: z.string().describe("The employee's id") });
  const nameParam = z.object({ name: z.string().describe("The employee's full name") });
  const employee = defineTool({
    name: "get_employee",
    description: "An employee's record, by full name.",
    parameters: nameParam,
    execute: ({ name }) => {
      const e = byName(name);
      if (!e) return `No employee named "${name}".`;
      state.employeeLookedUp = e.name;
      return [
        `Employee: ${e.name}`,
        `Employee ID: ${e.employeeId}`,
        `Department: ${e.department}`,
        `Title: ${e.title}`,
        `Started: ${e.started}`,
        `Office: ${e.office}`,
        `Manager: ${e.manager}`,
        "Clearance level: withheld here; the security audit holds it",
        "Emergency contact: no longer kept in this record since a migration; look in the historical employee records",
      ].join("\n");
    },
  });
  const security = defineTool({
    name: "security_audit",
    description: "Security audit records of an employee, by employee id.",
    parameters: idParam,
    execute: ({ employee_id }) => {
      const e = byId(employee_id);
      if (!e) return `No security audit record for "${employee_id}".`;
      state.securityFetched = e.employeeId;
      return [
        `Security audit: ${e.employeeId} (${e.name})`,
        `Clearance level: ${e.clearance}`,
        `Granted: ${e.clearanceGranted}`,
        `Sponsor: ${e.sponsor}`,
        `Last review: ${e.lastReview}`,
        `Expires: ${e.clearanceExpires}`,
        `Access groups: ${e.accessGroups}`,
      ].join("\n");
    },
  });
  const personnel = defineTool({
    name: "personnel_file",
    description: "An employee's personnel file, by employee id.",
    parameters: idParam,
    execute: ({ employee_id }) => {
      const e = byId(employee_id);
      if (!e) return `No personnel file for "${employee_id}".`;
      // The dead end: it points elsewhere instead of answering.
      return [
        `Personnel file: ${e.employeeId}`,
        "Holds: pay history, performance reviews, leave balance",
        "Emergency contact: not kept in personnel files; moved to the HR onboarding records in the 2020 migration",
      ].join("\n");
    },
  });
  const onboarding = defineTool({
    name: "onboarding_records",
    description: "HR onboarding records of an employee, by employee id.",
    parameters: idParam,
    execute: ({ employee_id }) => {
      const e = byId(employee_id);
      if (!e) return `No onboarding record for "${employee_id}".`;
      state.onboardingFetched = e.employeeId;
      return [
        `Onboarding record: ${e.employeeId} (${e.name})`,
        `Onboarded: ${e.started}`,
        `Emergency contact: ${e.emergencyContact}`,
        `Dietary needs: ${e.dietary}`,
        `Shirt size: ${e.shirtSize}`,
        `Equipment: ${e.equipment}`,
      ].join("\n");
    },
  });
  const compliance = defineTool({
    name: "compliance_check",
    description: "An employee's compliance status, by employee id.",
    parameters: idParam,
    execute: ({ employee_id }) => `Compliance for ${employee_id}: every mandatory training done; last security awareness training 2024-11-15; nothing outstanding.`,
  });
  const directory = defineTool({
    name: "hr_directory",
    description: "An employee's HR directory entry, by name.",
    parameters: nameParam,
    execute: ({ name }) => {
      const e = byName(name);
      if (!e) return `No directory entry for "${name}".`;
      return `Directory: ${e.name}\nDepartment: ${e.department}, reports to ${e.manager}\nOffice: ${e.office}, extension ${e.extension}\nStatus: active, full time`;
    },
  });
  const submit = defineTool({
    name: "submit_report",
    description: "Submit the finished profile report of an employee.",
    parameters: z.object({
      employee_name: z.string().describe("The employee's full name"),
      report: z.string().describe("The complete profile report"),
    }),
    execute: ({ employee_name }) => `Profile report for ${employee_name} submitted.`,
  });
  const workflow = new Workflow({
    name: "data_gap_recovery_stateful",
    tools: {
      get_employee: employee,
      security_audit: security,
      personnel_file: personnel,
      onboarding_records: onboarding,
      compliance_check: compliance,
      hr_directory: directory,
      submit_report: submit,
    },
    requiredSteps: ["get_employee"],
    terminalTool: "submit_report",
    systemPromptTemplate: "You work with the HR systems. Gather what the request asks for with the tools, then submit a complete profile report.",
  });
  return { workflow, state };
}

const profileReport: PlanStep = {
  tool: "submit_report",
  args: (s) => ({
    employee_name: fieldOf(s, "get_employee", "Employee"),
    report:
      `${fieldOf(s, "get_employee", "Employee")} (${fieldOf(s, "get_employee", "Employee ID")}), ${fieldOf(s, "get_employee", "Title")}, ` +
      `${fieldOf(s, "get_employee", "Department")}. Clearance level: ${fieldOf(s, "security_audit", "Clearance level")}. ` +
      `Emergency contact: ${fieldOf(s, "onboarding_records", "Emergency contact")}.`,
  }),
};

const profileSteps = (name: string): PlanStep[] => {
  const id = (s: Seen) => ({ employee_id: fieldOf(s, "get_employee", "Employee ID") });
  return [
    { tool: "get_employee", args: () => ({ name }) },
    { tool: "security_audit", args: id },
    // The record points at "historical records": the personnel file is the natural first guess, and a dead end.
    { tool: "personnel_file", args: id },
    { tool: "onboarding_records", args: id },
    profileReport,
  ];
};

export const dataGapRecoveryStateful: EvalScenario = scenario<HrState>({
  name: "data_gap_recovery_stateful",
  description: "Follow hints and a dead end to the clearance and the emergency contact, carrying the right employee id (a decoy employee is on file).",
  tags: ["stateful", "model_quality", "reasoning"],
  userInput: "I need a full profile of Sarah Chen for the onboarding audit, including her clearance level and emergency contact.",
  idealIterations: 5,
  maxIterations: 15,
  budgetTokens: 8192,
  build: hrWorkflow,
  validate: ({ args, state }) => {
    const text = `${String(args.employee_name)} ${String(args.report)}`;
    return (
      mentionsAll(text, ["engineering", "michael"]) &&
      mentionsAny(text, ["l3", "confidential"]) &&
      mentionsAny(text, ["867-5309", "spouse"]) &&
      state.employeeLookedUp !== undefined &&
      state.securityFetched === "E-1847" &&
      state.onboardingFetched === "E-1847"
    );
  },
  oracle: planOracle(profileSteps("Sarah Chen")),
  slips: [
    {
      // Writes the finished profile as a plain reply: the retry nudge asks for submit_report; without one the run has no answer.
      name: "writes_profile_as_text",
      rate: 0.95,
      when: (v) => noTextReplyYet(v) && answered(v, "onboarding_records") && !new Seen(v.results).tried("submit_report"),
      step: (v) => ({ text: `Here is the profile. ${String(profileReport.args(new Seen(v.results)).report)}` }),
    },
    // Stops at the dead end: submits without the emergency contact.
    wrongPath("stops_at_dead_end", 0.01, [
      ...profileSteps("Sarah Chen").slice(0, 3),
      {
        tool: "submit_report",
        args: (s) => ({
          employee_name: fieldOf(s, "get_employee", "Employee"),
          report: `${fieldOf(s, "get_employee", "Employee")}, ${fieldOf(s, "get_employee", "Department")}. Clearance level: ${fieldOf(s, "security_audit", "Clearance level")}. Emergency contact: not on file.`,
        }),
      },
    ]),
    wrongPath("decoy_employee", 0.01, profileSteps("James Liu")),
  ],
});

export const STATEFUL_OG_REASONING: EvalScenario[] = [conditionalRoutingStateful, dataGapRecoveryStateful];
