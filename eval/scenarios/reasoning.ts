/**
 * Reasoning scenarios: route on data (severity decides paging vs a ticket) and recover from a
 * dead end (an empty search that points elsewhere, then a product renamed to a new SKU).
 */
import { z } from "zod";
import { defineTool, Workflow } from "../../src/core/index.js";
import { scenario, type EvalScenario } from "../scenario.js";
import { planOracle } from "./oracle-kit.js";

function conditionalRoutingWorkflow(): Workflow {
  const alert = defineTool({
    name: "get_alert",
    description: "Details of an open alert.",
    parameters: z.object({ alert_id: z.string() }),
    execute: ({ alert_id }) => {
      if (alert_id !== "AL-301") throw new Error(`no alert ${alert_id}`);
      return "alert_id=AL-301 service=payments severity=high started=10:07 symptom=5xx_spike";
    },
  });
  const deploys = defineTool({
    name: "check_recent_deploys",
    description: "Deploys of a service in the last hour.",
    parameters: z.object({ service: z.string() }),
    execute: ({ service }) => {
      if (service !== "payments") return `service=${service} deploys=0`;
      return "service=payments deploys=1 deploy_id=D-88 deployed=10:02 correlated_with_alert=true";
    },
  });
  const metrics = defineTool({
    name: "check_metrics",
    description: "CPU and memory for a service.",
    parameters: z.object({ service: z.string() }),
    execute: ({ service }) => `service=${service} cpu_pct=41 mem_pct=58 anomaly=none`,
  });
  const page = defineTool({
    name: "page_oncall",
    description: "Page the on-call engineer (for high-severity alerts only).",
    parameters: z.object({ service: z.string(), note: z.string() }),
    execute: ({ service }) => `paged=true service=${service} engineer=R.Okafor`,
  });
  const ticket = defineTool({
    name: "create_ticket",
    description: "Open a ticket (for low-severity alerts).",
    parameters: z.object({ service: z.string(), note: z.string() }),
    execute: ({ service }) => `ticket=T-4410 service=${service}`,
  });
  const resolve = defineTool({
    name: "resolve_incident",
    description: "Close the triage with the escalation taken and the suspected cause.",
    parameters: z.object({
      alert_id: z.string(),
      escalation: z.enum(["paged", "ticket"]),
      suspected_deploy: z.string().describe("deploy id, or 'none'"),
    }),
    execute: () => "triage closed",
  });
  return new Workflow({
    name: "conditional_routing",
    tools: { get_alert: alert, check_recent_deploys: deploys, check_metrics: metrics, page_oncall: page, create_ticket: ticket, resolve_incident: resolve },
    requiredSteps: ["get_alert"],
    terminalTool: "resolve_incident",
    systemPromptTemplate:
      "You triage incidents. High severity: page on-call. Low severity: open a ticket. " +
      "Correlate the alert with recent deploys before closing.",
  });
}

export const conditionalRouting: EvalScenario = scenario({
  name: "conditional_routing",
  description: "Incident triage: severity decides the route; the deploy must be correlated.",
  tags: ["model_quality", "reasoning"],
  userInput: "Triage alert AL-301.",
  idealIterations: 4,
  maxIterations: 12,
  budgetTokens: 8192,
  build: () => ({ workflow: conditionalRoutingWorkflow(), state: undefined }),
  validate: ({ args }) => args.alert_id === "AL-301" && args.escalation === "paged" && args.suspected_deploy === "D-88",
  oracle: planOracle([
    { tool: "get_alert", args: () => ({ alert_id: "AL-301" }) },
    { tool: "check_recent_deploys", args: (s) => ({ service: s.get("get_alert", "service", "payments") }) },
    { tool: "page_oncall", args: (s) => ({ service: s.get("get_alert", "service", "payments"), note: "5xx spike after deploy" }) },
    { tool: "resolve_incident", args: (s) => ({ alert_id: "AL-301", escalation: "paged", suspected_deploy: s.get("check_recent_deploys", "deploy_id", "D-88") }) },
  ]),
});

function dataGapWorkflow(): Workflow {
  const catalog = defineTool({
    name: "search_catalog",
    description: "Search the current product catalog by name.",
    parameters: z.object({ query: z.string() }),
    // A dead end, not an error: the model must read the hint and change course.
    execute: ({ query }) => `results=0 query=${query.replaceAll(" ", "_")} hint=discontinued_products_are_in_search_archive`,
  });
  const archive = defineTool({
    name: "search_archive",
    description: "Search discontinued products by name.",
    parameters: z.object({ query: z.string() }),
    execute: ({ query }) => {
      if (!/blue\s*widget/i.test(query)) return "results=0";
      return "results=1 sku=W-114 status=discontinued replaced_by=W-214";
    },
  });
  const product = defineTool({
    name: "get_product",
    description: "Product record for a SKU, including where it is stocked.",
    parameters: z.object({ sku: z.string() }),
    execute: ({ sku }) => {
      if (sku === "W-114") return "sku=W-114 status=discontinued warehouse=none replaced_by=W-214";
      if (sku !== "W-214") throw new Error(`no product ${sku}`);
      return "sku=W-214 name=Blue_Widget_v2 warehouse=RNO";
    },
  });
  const stock = defineTool({
    name: "check_stock_level",
    description: "Units on hand of a SKU in a warehouse code.",
    parameters: z.object({ sku: z.string(), warehouse: z.string() }),
    execute: ({ sku, warehouse }) => {
      if (sku !== "W-214" || warehouse !== "RNO") throw new Error(`no stock record for ${sku} in ${warehouse}`);
      return "sku=W-214 warehouse=RNO on_hand=37";
    },
  });
  const report = defineTool({
    name: "report_stock",
    description: "Report the stock level to the user.",
    parameters: z.object({ sku: z.string(), warehouse: z.string(), on_hand: z.number() }),
    execute: () => "reported",
  });
  return new Workflow({
    name: "data_gap_recovery",
    tools: { search_catalog: catalog, search_archive: archive, get_product: product, check_stock_level: stock, report_stock: report },
    requiredSteps: ["check_stock_level"],
    terminalTool: "report_stock",
    systemPromptTemplate: "You answer stock questions. Products may have been discontinued and replaced.",
  });
}

export const dataGapRecovery: EvalScenario = scenario({
  name: "data_gap_recovery",
  description: "Dead-end recovery: empty catalog search, archive lookup, replacement SKU, stock.",
  tags: ["model_quality", "reasoning"],
  userInput: "How many blue widgets do we have in stock?",
  idealIterations: 5,
  maxIterations: 14,
  budgetTokens: 8192,
  build: () => ({ workflow: dataGapWorkflow(), state: undefined }),
  validate: ({ args }) => args.sku === "W-214" && args.warehouse === "RNO" && args.on_hand === 37,
  oracle: planOracle([
    { tool: "search_catalog", args: () => ({ query: "blue widget" }) },
    { tool: "search_archive", args: () => ({ query: "blue widget" }) },
    { tool: "get_product", args: (s) => ({ sku: s.get("search_archive", "replaced_by", "W-214") }) },
    { tool: "check_stock_level", args: (s) => ({ sku: s.get("get_product", "sku", "W-214"), warehouse: s.get("get_product", "warehouse", "RNO") }) },
    {
      tool: "report_stock",
      args: (s) => ({ sku: "W-214", warehouse: s.get("check_stock_level", "warehouse", "RNO"), on_hand: Number(s.get("check_stock_level", "on_hand", "37")) }),
    },
  ]),
});

export const REASONING: EvalScenario[] = [conditionalRouting, dataGapRecovery];
