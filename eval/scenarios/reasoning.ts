/**
 * Reasoning scenarios as forge's leaderboard runs them: an incident whose root cause only shows
 * when the deploy is lined up with the error spike (with an old incident as a lure), and an
 * employee profile whose missing fields are behind a restricted field and a dead end. Tools
 * are fixed-answer functions; validation reads the terminal call's text for the facts the
 * investigation had to find. The argument-checking variants are in checked.ts.
 */
import { z } from "zod";
import { defineTool, Workflow } from "../../src/core/index.js";
import { scenario, type EvalScenario, type OracleView } from "../scenario.js";
import { captured, mentionsAll, mentionsAny } from "./answer-text.js";
import { planOracle, Seen, unansweredTurns } from "./oracle-kit.js";

const seen = (view: OracleView) => new Seen(view.results);

const ALERT = [
  "Alert P1-8842 on payments-service, raised 2025-01-15 14:23:07 UTC.",
  "Kind: error-rate threshold. Error rate now 12.4% against a 2% threshold.",
  "Endpoint: /api/v2/charge. Firing for 18 minutes.",
  "Last deploy to the service: 2025-01-15 14:04:51 UTC.",
  "Previous alert on the service: 2024-11-03, resolved (DB connection pool).",
].join("\n");

const METRICS = [
  "payments-service, last 60 minutes:",
  "14:00 error 0.3%, p99 latency 120ms, cpu 45%, mem 62%",
  "14:05 error 0.4%, p99 latency 118ms, cpu 44%, mem 61%",
  "14:10 error 8.1%, p99 latency 940ms, cpu 47%, mem 63%",
  "14:15 error 11.2%, p99 latency 1850ms, cpu 51%, mem 64%",
  "14:20 error 12.4%, p99 latency 2100ms, cpu 52%, mem 65%",
  "14:25 error 12.1%, p99 latency 2040ms, cpu 50%, mem 64%",
  "The errors start between 14:05 and 14:10; cpu and memory barely move; latency follows the error rate.",
].join("\n");

const LOGS = [
  "payments-service, last 30 minutes:",
  "14:08:12 WARN  HttpClient: upstream call, retry 1",
  "14:08:15 WARN  HttpClient: upstream call, retry 2",
  "14:09:01 ERROR PaymentProcessor: transaction failed, unexpected response format",
  "14:09:03 ERROR PaymentProcessor: transaction failed, unexpected response format",
  "14:11:44 WARN  ConnectionPool: 78% of the pool in use",
  "14:14:22 ERROR PaymentProcessor: transaction failed, unexpected response format",
  "14:18:33 WARN  HttpClient: upstream call, retry 1",
  "... 247 more lines like these",
].join("\n");

const DEPLOYMENT = [
  "Last deploy to payments-service: deploy-a7f3e2 at 2025-01-15 14:04:51 UTC, by jenkins-ci (merge of PR #1147).",
  "Change: payment gateway SDK upgraded from v3.8.1 to v4.0.0.",
  "SDK changelog: v4.0.0 is a breaking change to the response schema; transaction_id moved from the root to data.transaction_id.",
  "Rollback target: deploy-b82c1a (v3.8.1), available.",
].join("\n");

function conditionalRoutingWorkflow(): Workflow {
  const fixed = (name: string, description: string, answer: string) =>
    defineTool({ name, description, parameters: z.object({ service: z.string().describe("The service's name") }), execute: () => answer });
  const diagnose = defineTool({
    name: "diagnose",
    description: "File the root cause and the action to take.",
    parameters: z.object({
      diagnosis: z.string().describe("The root cause"),
      action: z.string().describe("What to do about it"),
    }),
    execute: ({ diagnosis, action }) => `Diagnosis filed: ${diagnosis}. Action: ${action}.`,
  });
  return new Workflow({
    name: "conditional_routing",
    tools: {
      get_alert: fixed("get_alert", "The details of the service's open P1 alert.", ALERT),
      check_metrics: fixed("check_metrics", "The service's metrics over time.", METRICS),
      check_logs: fixed("check_logs", "The service's recent log lines.", LOGS),
      check_deployment: fixed("check_deployment", "What the service's last deployment changed.", DEPLOYMENT),
      diagnose,
    },
    requiredSteps: ["get_alert", "check_metrics"],
    terminalTool: "diagnose",
    systemPromptTemplate:
      "You respond to production incidents. Investigate the P1 alert with the tools, find the root cause, and call diagnose once the evidence shows it.",
  });
}

export const conditionalRouting: EvalScenario = scenario({
  name: "conditional_routing",
  description: "Incident triage: line the error spike up with the deploy, name the breaking SDK change and roll it back.",
  tags: ["model_quality", "reasoning"],
  userInput: "The payments service has a P1 alert. Find the root cause and tell us what to do.",
  idealIterations: 4,
  maxIterations: 15,
  budgetTokens: 8192,
  build: () => ({ workflow: conditionalRoutingWorkflow(), state: undefined }),
  validate: ({ args }) => {
    const text = `${String(args.diagnosis ?? "")} ${String(args.action ?? "")}`;
    return mentionsAny(text, ["v4.0.0", "sdk", "gateway"]) && mentionsAny(text, ["rollback", "revert", "roll back"]) && mentionsAny(text, ["response", "schema", "transaction_id"]);
  },
  oracle: planOracle([
    { tool: "get_alert", args: () => ({ service: "payments-service" }) },
    { tool: "check_metrics", args: () => ({ service: "payments-service" }) },
    { tool: "check_deployment", args: () => ({ service: "payments-service" }) },
    {
      tool: "diagnose",
      args: (s) => ({
        diagnosis: `The errors began minutes after the last deploy. ${captured(s.text("check_deployment"), /^(Change: .*)$/m)} ${captured(s.text("check_deployment"), /^(SDK changelog: .*)$/m)}`,
        action: `Roll back to ${captured(s.text("check_deployment"), /Rollback target: (\S+)/)} and fix the response parsing before upgrading again.`,
      }),
    },
  ]),
  slips: [
    {
      // Takes the old incident in the alert as the cause and diagnoses before looking at the
      // metrics: step enforcement holds the diagnosis back until the metrics are read.
      name: "blames_the_old_incident",
      rate: 0.12,
      when: (v) => seen(v).succeeded("get_alert") && !seen(v).tried("check_metrics") && !seen(v).triedAfter("diagnose", "get_alert"),
      step: () => ({ tool: "diagnose", args: { diagnosis: "The DB connection pool is exhausted again, as in November.", action: "Restart the pool and raise its size." } }),
    },
    {
      // Reads the logs instead of the deployment and blames the busy connection pool.
      name: "blames_the_pool",
      rate: 0.02,
      when: (v) => seen(v).succeeded("check_metrics") && !seen(v).tried("check_deployment"),
      step: (v) =>
        seen(v).tried("check_logs")
          ? { tool: "diagnose", args: { diagnosis: "Connection pool saturation (78% in use) is failing transactions.", action: "Scale the connection pool." } }
          : { tool: "check_logs", args: { service: "payments-service" } },
    },
  ],
});

const EMPLOYEE = [
  "Sarah Chen, employee E-1847.",
  "Department: Engineering. Title: Senior Backend Engineer. Started 2019-03-15.",
  "Office: Building 3, floor 2. Manager: David Park.",
  "Clearance level: restricted, ask security_audit.",
  "Emergency contact: moved, see the historical employee records.",
].join("\n");

const AUDIT = [
  "Security audit, E-1847 (Sarah Chen).",
  "Clearance: L3 (Confidential), granted 2021-06-10, sponsored by David Park (Director, Engineering).",
  "Last review 2024-12-01, passed with no findings. Expires 2025-12-01.",
  "Access groups: payments-prod, internal-apis, staging-*.",
].join("\n");

const PERSONNEL = [
  "Personnel file, E-1847 (Sarah Chen): compensation history, performance reviews, PTO balance.",
  "Emergency contacts are not kept in personnel files: the 2020 migration moved them to the HR onboarding records.",
].join("\n");

const ONBOARDING = [
  "HR onboarding record, E-1847 (Sarah Chen), onboarded 2019-03-15.",
  "Emergency contact: Michael Chen (spouse), (555) 867-5309.",
  "Dietary restrictions: none. T-shirt: M. Equipment: MacBook Pro 16-inch, two monitors.",
].join("\n");

const COMPLIANCE = "Compliance, E-1847: every mandatory training done, security awareness last taken 2024-11-15, nothing outstanding.";

const DIRECTORY = "Directory: Sarah Chen, Engineering, reports to David Park. Building 3, floor 2, extension x4481. Active, full-time.";

function dataGapWorkflow(): Workflow {
  const byId = (name: string, description: string, answer: string) =>
    defineTool({ name, description, parameters: z.object({ employee_id: z.string().describe("The employee's id") }), execute: () => answer });
  const byName = (name: string, description: string, answer: string) =>
    defineTool({ name, description, parameters: z.object({ name: z.string().describe("The employee's full name") }), execute: () => answer });
  const submit = defineTool({
    name: "submit_report",
    description: "Submit the finished profile of an employee.",
    parameters: z.object({
      employee_name: z.string().describe("The employee's full name"),
      report: z.string().describe("The whole profile"),
    }),
    execute: ({ employee_name }) => `Profile of ${employee_name} submitted.`,
  });
  return new Workflow({
    name: "data_gap_recovery",
    tools: {
      get_employee: byName("get_employee", "An employee's record, by name.", EMPLOYEE),
      security_audit: byId("security_audit", "An employee's security audit records.", AUDIT),
      personnel_file: byId("personnel_file", "An employee's personnel file.", PERSONNEL),
      onboarding_records: byId("onboarding_records", "An employee's HR onboarding records.", ONBOARDING),
      compliance_check: byId("compliance_check", "An employee's compliance status.", COMPLIANCE),
      hr_directory: byName("hr_directory", "An employee's entry in the HR directory.", DIRECTORY),
      submit_report: submit,
    },
    requiredSteps: ["get_employee"],
    terminalTool: "submit_report",
    systemPromptTemplate: "You work with the HR systems. Gather what is asked about the employee with the tools and submit a complete profile.",
  });
}

export const dataGapRecovery: EvalScenario = scenario({
  name: "data_gap_recovery",
  description: "Dead-end recovery: follow the record's pointers past a misleading tool to the clearance and the emergency contact.",
  tags: ["model_quality", "reasoning"],
  userInput: "I need Sarah Chen's full profile for the onboarding audit, including her clearance level and her emergency contact.",
  idealIterations: 5,
  maxIterations: 15,
  budgetTokens: 8192,
  build: () => ({ workflow: dataGapWorkflow(), state: undefined }),
  validate: ({ args }) => {
    const text = `${String(args.employee_name ?? "")} ${String(args.report ?? "")}`;
    return mentionsAll(text, ["engineering"]) && mentionsAny(text, ["l3", "confidential"]) && mentionsAll(text, ["michael"]) && mentionsAny(text, ["867-5309", "spouse"]);
  },
  oracle: planOracle([
    { tool: "get_employee", args: () => ({ name: "Sarah Chen" }) },
    { tool: "security_audit", args: (s) => ({ employee_id: captured(s.text("get_employee"), /\bE-\d+/) }) },
    // The record only says "historical employee records": the personnel file is where a
    // reader looks first, and it points on to onboarding.
    { tool: "personnel_file", args: (s) => ({ employee_id: captured(s.text("get_employee"), /\bE-\d+/) }) },
    { tool: "onboarding_records", args: (s) => ({ employee_id: captured(s.text("get_employee"), /\bE-\d+/) }) },
    {
      tool: "submit_report",
      args: (s) => ({ employee_name: "Sarah Chen", report: [s.text("get_employee"), s.text("security_audit"), s.text("onboarding_records")].join("\n") }),
    },
  ]),
  slips: [
    {
      // Stops at the dead end and tells the user where the contact went instead of going
      // there: a retry nudge gets it to call the onboarding records.
      name: "narrates_the_dead_end",
      rate: 0.97,
      when: (v) => seen(v).succeeded("personnel_file") && !seen(v).tried("onboarding_records") && unansweredTurns(v) === 0,
      step: () => ({ text: "Her personnel file has no emergency contact; it says those moved to the HR onboarding records in 2020." }),
    },
    {
      // Submits the profile with the contact missing rather than follow the pointer.
      name: "gives_up_on_the_contact",
      rate: 0.01,
      when: (v) => seen(v).succeeded("personnel_file") && !seen(v).tried("onboarding_records"),
      step: (v) => ({
        tool: "submit_report",
        args: { employee_name: "Sarah Chen", report: `${seen(v).text("get_employee")}\n${seen(v).text("security_audit")}\nEmergency contact: not on file.` },
      }),
    },
  ],
});

export const REASONING: EvalScenario[] = [conditionalRouting, dataGapRecovery];
