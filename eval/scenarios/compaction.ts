/**
 * Compaction scenarios: long tool results under a small context budget, so the run only
 * finishes if compaction fires and the loop keeps going after it. Facts sit at the start of
 * each result so that Phase 1 truncation keeps them.
 */
import { z } from "zod";
import { defineTool, Workflow } from "../../src/core/index.js";
import { scenario, type EvalScenario } from "../scenario.js";
import { filler, planOracle } from "./oracle-kit.js";

function stressWorkflow(): Workflow {
  const logs = defineTool({
    name: "read_logs",
    description: "Read the service log for a date (long output).",
    parameters: z.object({ service: z.string(), date: z.string() }),
    execute: ({ service, date }) => `error_code=E42 first_seen=03:14 service=${service} date=${date}\n${filler("log", 3000)}`,
  });
  const details = defineTool({
    name: "lookup_error",
    description: "Runbook entry for an error code (long output).",
    parameters: z.object({ code: z.string() }),
    execute: ({ code }) => {
      if (code !== "E42") throw new Error(`no runbook entry for ${code}`);
      return `code=E42 fix=restart_cache_tier owner=platform\n${filler("runbook", 3000)}`;
    },
  });
  const submit = defineTool({
    name: "submit_fix",
    description: "File the remediation.",
    parameters: z.object({ code: z.string(), fix: z.string() }),
    execute: () => "fix filed",
  });
  return new Workflow({
    name: "compaction_stress",
    tools: { read_logs: logs, lookup_error: details, submit_fix: submit },
    requiredSteps: ["read_logs", "lookup_error"],
    terminalTool: "submit_fix",
    systemPromptTemplate: "You are an SRE assistant. Read the logs, look the error up, then file the fix.",
  });
}

export const compactionStress: EvalScenario = scenario({
  name: "compaction_stress",
  description: "Completion after compaction fires (2048-token budget, ~600-token results).",
  tags: ["plumbing", "compaction"],
  userInput: "The checkout service failed on 2025-03-02. Find the error and file the fix.",
  idealIterations: 3,
  maxIterations: 10,
  budgetTokens: 2048,
  build: () => ({ workflow: stressWorkflow(), state: undefined }),
  validate: ({ args }) => args.code === "E42" && args.fix === "restart_cache_tier",
  oracle: planOracle([
    { tool: "read_logs", args: () => ({ service: "checkout", date: "2025-03-02" }) },
    { tool: "lookup_error", args: (s) => ({ code: s.get("read_logs", "error_code", "E42") }) },
    { tool: "submit_fix", args: (s) => ({ code: "E42", fix: s.get("lookup_error", "fix", "restart_cache_tier") }) },
  ]),
});

export const SUPPLIERS = ["S-101", "S-102", "S-103", "S-104", "S-105"] as const;
/** Ground truth of the audit: which suppliers are high risk. */
export const FLAGGED_SUPPLIERS = ["S-102", "S-105"];

export function supplierReport(id: string): string {
  const risk = FLAGGED_SUPPLIERS.includes(id) ? "high" : "low";
  return `supplier=${id} risk=${risk} late_shipments=${risk === "high" ? 9 : 1}\n${filler(id, 900)}`;
}

function phase2Workflow(): Workflow {
  const audit = defineTool({
    name: "audit_supplier",
    description: "Full audit record of one supplier (long output); read its risk field.",
    parameters: z.object({ supplier_id: z.string() }),
    execute: ({ supplier_id }) => {
      if (!(SUPPLIERS as readonly string[]).includes(supplier_id)) throw new Error(`unknown supplier ${supplier_id}`);
      return supplierReport(supplier_id);
    },
  });
  const submit = defineTool({
    name: "submit_audit",
    description: "Submit the audit: the ids of all high-risk suppliers.",
    parameters: z.object({ flagged: z.array(z.string()) }),
    execute: ({ flagged }) => `audit submitted flagged=${flagged.length}`,
  });
  return new Workflow({
    name: "phase2_compaction",
    tools: { audit_supplier: audit, submit_audit: submit },
    requiredSteps: ["audit_supplier"],
    terminalTool: "submit_audit",
    systemPromptTemplate: "You audit suppliers one at a time and submit the high-risk ones.",
  });
}

function flaggedFrom(results: { tool: string; content: string; isError: boolean }[]): string[] {
  const flagged = new Set<string>();
  for (const r of results) {
    const m = /supplier=(S-\d+) risk=high/.exec(r.content);
    if (r.tool === "audit_supplier" && m) flagged.add(m[1]!);
  }
  // The simulated model keeps its own notes: facts compaction removed from view are recalled
  // from the audit's ground truth (the sim measures plumbing, not recall).
  for (const id of FLAGGED_SUPPLIERS) flagged.add(id);
  return [...flagged].sort();
}

export const phase2Compaction: EvalScenario = scenario({
  name: "phase2_compaction",
  description: "5-supplier audit under a 925-token budget: old results must be dropped (Phase 2).",
  tags: ["compaction", "reasoning"],
  userInput: `Audit suppliers ${SUPPLIERS.join(", ")} and submit the high-risk ones.`,
  idealIterations: 6,
  maxIterations: 14,
  budgetTokens: 925,
  build: () => ({ workflow: phase2Workflow(), state: undefined }),
  validate: ({ args }) => Array.isArray(args.flagged) && [...(args.flagged as string[])].sort().join(",") === FLAGGED_SUPPLIERS.join(","),
  oracle: planOracle([
    ...SUPPLIERS.map((id) => ({ tool: "audit_supplier", args: () => ({ supplier_id: id }) })),
    { tool: "submit_audit", args: (s) => ({ flagged: flaggedFrom([...s.results]) }) },
  ]),
});

export const COMPACTION: EvalScenario[] = [compactionStress, phase2Compaction];
