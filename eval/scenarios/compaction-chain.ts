/**
 * The 10-step compaction chain: a medical case review where every step's id comes from the
 * previous result and every result is long. The same chain runs under four budgets: one with
 * no pressure, and three sized to push TieredCompact to Phase 1, 2 and 3.
 */
import { z } from "zod";
import { defineTool, Workflow, type AnyToolDef } from "../../src/core/index.js";
import { scenario, type EvalScenario } from "../scenario.js";
import { filler, planOracle, type PlanStep } from "./oracle-kit.js";
import { ledgerConsistent, withLedger, type LedgerState } from "./stateful-variant.js";

/** Each link: the tool, the argument it takes, the id it reads, and the facts it returns. */
const CHAIN = [
  { tool: "find_patient", arg: "mrn", expects: "MRN-5530", returns: "patient_id=P-77" },
  { tool: "get_encounter", arg: "patient_id", expects: "P-77", returns: "encounter_id=E-310" },
  { tool: "get_symptoms", arg: "encounter_id", expects: "E-310", returns: "symptom_set=SX-4" },
  { tool: "get_vitals", arg: "symptom_set", expects: "SX-4", returns: "vitals_id=V-12 temp_c=38.9" },
  { tool: "get_labs", arg: "vitals_id", expects: "V-12", returns: "lab_panel=L-208 wbc=15.2" },
  { tool: "get_imaging", arg: "lab_panel", expects: "L-208", returns: "imaging_id=I-9 finding=right_lower_lobe_opacity" },
  { tool: "get_medications", arg: "imaging_id", expects: "I-9", returns: "med_list=M-41" },
  { tool: "check_interactions", arg: "med_list", expects: "M-41", returns: "interaction=warfarin_clarithromycin interaction_ref=X-3" },
  { tool: "get_guideline", arg: "interaction_ref", expects: "X-3", returns: "guideline=G-CAP-2 diagnosis=community_acquired_pneumonia" },
] as const;

/**
 * Long output per link. With forge's budgets (P1 3,600, P2 2,200, P3 1,536 tokens) and our
 * TieredCompact (the last two iterations kept whole, older results cut to 200 characters),
 * 2,300 characters is what makes each budget reach the phase it is named for on the clean
 * simulated path: anything from about 2,100 to 2,500 does, 1,200 (forge-sized results) leaves
 * P2 in Phase 1, and from 2,600 P3 overflows its budget.
 */
const FILLER_CHARS = 2300;

const TRUTH = { patient_id: "P-77", diagnosis: "community_acquired_pneumonia", interaction: "warfarin_clarithromycin" };

function chainTool(link: (typeof CHAIN)[number]): AnyToolDef {
  return defineTool({
    name: link.tool,
    description: `Step of the case review; takes ${link.arg} from the previous step (long output).`,
    parameters: z.object({ [link.arg]: z.string() }),
    execute: (args: Record<string, unknown>) => {
      const got = args[link.arg];
      if (got !== link.expects) throw new Error(`no record for ${link.arg}=${String(got)}`);
      return `${link.returns}\n${filler(link.tool, FILLER_CHARS)}`;
    },
  });
}

function chainWorkflow(): Workflow {
  const submit = defineTool({
    name: "submit_diagnosis",
    description: "Submit the reviewed diagnosis and any drug interaction found.",
    parameters: z.object({ patient_id: z.string(), diagnosis: z.string(), interaction: z.string() }),
    execute: () => "diagnosis submitted",
  });
  const tools: Record<string, AnyToolDef> = Object.fromEntries(CHAIN.map((l) => [l.tool, chainTool(l)]));
  tools.submit_diagnosis = submit;
  return new Workflow({
    name: "compaction_chain",
    tools,
    requiredSteps: CHAIN.map((l) => l.tool),
    terminalTool: "submit_diagnosis",
    systemPromptTemplate: "You review a patient case step by step. Each step needs the id returned by the previous step.",
  });
}

const plan: PlanStep[] = [
  ...CHAIN.map((link, i) => ({
    tool: link.tool,
    args: (s: import("./oracle-kit.js").Seen) => {
      const prev = i === 0 ? undefined : CHAIN[i - 1]!;
      // Each link's argument is named after the fact the previous link returns.
      return { [link.arg]: prev ? s.get(prev.tool, link.arg, link.expects) : link.expects };
    },
  })),
  {
    tool: "submit_diagnosis",
    args: (s) => ({
      patient_id: s.get("find_patient", "patient_id", TRUTH.patient_id),
      diagnosis: s.get("get_guideline", "diagnosis", TRUTH.diagnosis),
      interaction: s.get("check_interactions", "interaction", TRUTH.interaction),
    }),
  },
];

function chainScenario(suffix: string, budgetTokens: number, tags: string[], what: string): EvalScenario {
  return scenario<LedgerState>({
    name: `compaction_chain_${suffix}`,
    description: `10-step case review; ${what}.`,
    tags,
    userInput: "Review the case of patient MRN-5530 and submit the diagnosis.",
    idealIterations: 10,
    maxIterations: 20,
    budgetTokens,
    build: () => withLedger(chainWorkflow()),
    validate: (call) =>
      call.args.patient_id === TRUTH.patient_id && call.args.diagnosis === TRUTH.diagnosis && call.args.interaction === TRUTH.interaction && ledgerConsistent(call),
    oracle: planOracle(plan),
  });
}

export const COMPACTION_CHAIN: EvalScenario[] = [
  chainScenario("baseline", 8192, ["stateful"], "full budget, no compaction pressure"),
  chainScenario("p1", 3600, ["stateful", "compaction"], "budget sized so Phase 1 (truncate old results) suffices"),
  chainScenario("p2", 2200, ["stateful", "compaction"], "budget sized so old results must be dropped (Phase 2)"),
  chainScenario("p3", 1536, ["stateful", "compaction"], "budget sized to reach Phase 3"),
];
