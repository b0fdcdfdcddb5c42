/**
 * Stateful variants: the same logic as a core scenario, but each run gets a fresh ledger that
 * its tools write to, and validation checks the ledger as well as the terminal arguments
 * (required steps really ran before the terminal, which ran exactly once with those args).
 * Only our own compaction scenarios are wrapped this way; the nine OG ones have hand-written
 * stateful variants with decoy records (stateful-og.ts), as forge's do.
 */
import { Workflow, type AnyToolDef } from "../../src/core/index.js";
import { scenario, type EvalScenario, type TerminalCall } from "../scenario.js";
import { COMPACTION } from "./compaction.js";

export interface LedgerEntry {
  tool: string;
  args: Record<string, unknown>;
  ok: boolean;
}

export interface LedgerState {
  ledger: LedgerEntry[];
  requiredSteps: readonly string[];
  terminalTools: readonly string[];
  /** The base scenario's own state (its tools still write to it), for its `validate`. */
  base?: unknown;
}

/**
 * Wrap a tool so every execution (success or throw) is appended to `state.ledger`.
 *
 * @example const wrapped = recordInto(state, workflow.getTool("get_weather"));
 */
export function recordInto(state: LedgerState, tool: AnyToolDef): AnyToolDef {
  return Object.freeze({
    ...tool,
    execute: async (args: Record<string, unknown>, ctx: Parameters<AnyToolDef["execute"]>[1]) => {
      try {
        const result = await tool.execute(args, ctx);
        state.ledger.push({ tool: tool.name, args: structuredClone(args), ok: true });
        return result;
      } catch (error) {
        state.ledger.push({ tool: tool.name, args: structuredClone(args), ok: false });
        throw error;
      }
    },
  });
}

/**
 * Rebuild `workflow` with every tool recording into a fresh ledger.
 *
 * @example const { workflow, state } = withLedger(compactionStress.build().workflow);
 */
export function withLedger(workflow: Workflow): { workflow: Workflow; state: LedgerState } {
  const state: LedgerState = { ledger: [], requiredSteps: workflow.requiredSteps, terminalTools: workflow.terminalTools };
  const tools = Object.fromEntries(Object.entries(workflow.tools).map(([k, t]) => [k, recordInto(state, t)]));
  const wrapped = new Workflow({
    name: workflow.name,
    description: workflow.description,
    tools,
    requiredSteps: [...workflow.requiredSteps],
    terminalTool: [...workflow.terminalTools],
    systemPromptTemplate: workflow.systemPromptTemplate,
  });
  return { workflow: wrapped, state };
}

/**
 * The ledger agrees with the terminal call: steps before it, exactly one terminal success.
 *
 * @example ledgerConsistent({ tool: "report_weather", args, state }) // true after a clean run
 */
export function ledgerConsistent({ tool, args, state }: TerminalCall<LedgerState>): boolean {
  const okTerminal = state.ledger.filter((e) => e.ok && state.terminalTools.includes(e.tool));
  if (okTerminal.length !== 1) return false;
  const last = okTerminal[0]!;
  if (last.tool !== tool || JSON.stringify(last.args) !== JSON.stringify(args)) return false;
  const before = state.ledger.slice(0, state.ledger.indexOf(last));
  return state.requiredSteps.every((step) => before.some((e) => e.ok && e.tool === step));
}

/**
 * @example
 * const s = statefulVariant(compactionStress); // "compaction_stress_stateful", tags ["stateful", "compaction"]
 */
export function statefulVariant(base: EvalScenario, extra?: (call: TerminalCall<LedgerState>) => boolean): EvalScenario {
  return scenario<LedgerState>({
    ...base,
    name: `${base.name}_stateful`,
    description: `${base.description} (fresh per-run ledger, validated)`,
    tags: ["stateful", ...base.tags.filter((t) => t !== "plumbing" || !base.tags.includes("compaction"))],
    build: () => {
      const instance = base.build();
      const { workflow, state } = withLedger(instance.workflow);
      return { workflow, state: { ...state, base: instance.state } };
    },
    validate: (call) => base.validate({ ...call, state: call.state.base }) && ledgerConsistent(call) && (extra ? extra(call) : true),
  });
}

/** @example STATEFUL_VARIANTS.map((s) => s.name) // ["compaction_stress_stateful", "phase2_compaction_stateful"] */
export const STATEFUL_VARIANTS: EvalScenario[] = COMPACTION.map((s) => statefulVariant(s));
