/**
 * Play a scenario's oracle straight against its own tools, with no model and no runner: the
 * reference path every scenario must support (used by the suite's self-test).
 */
import { describeError, ToolResolutionError } from "../src/core/index.js";
import type { EvalScenario, OracleView, TerminalCall } from "./scenario.js";

export interface OraclePlay {
  turns: number;
  terminal: TerminalCall;
  valid: boolean;
  results: OracleView["results"];
}

/**
 * @example
 * const play = await playOracle(basic2step); // { turns: 2, valid: true, ... }
 */
export async function playOracle(scenario: EvalScenario, maxTurns = scenario.maxIterations): Promise<OraclePlay> {
  const { workflow, state } = scenario.build();
  const results: OracleView["results"] = [];
  for (let turn = 1; turn <= maxTurns; turn++) {
    const step = scenario.oracle({ results: [...results], userInput: scenario.userInput, toolNames: workflow.toolNames, turn });
    if ("text" in step) throw new Error(`${scenario.name}: oracle answered with text on turn ${turn}`);
    const calls = "calls" in step ? step.calls : [step];
    for (const [i, call] of calls.entries()) {
      const tool = workflow.getTool(call.tool);
      const parsed = tool.validateArgs(call.args);
      if (!parsed.ok) throw new Error(`${scenario.name}: oracle args for ${call.tool} invalid: ${JSON.stringify(parsed.issues)}`);
      const ctx = { signal: new AbortController().signal, idempotencyKey: `play:${turn}:${i}`, runId: "play", iteration: turn, callIndex: i };
      try {
        const out = await tool.execute(parsed.value, ctx);
        if (workflow.isTerminal(call.tool)) {
          const terminal = { tool: call.tool, args: call.args, state };
          return { turns: turn, terminal, valid: scenario.validate(terminal), results };
        }
        results.push({ tool: call.tool, args: call.args, content: typeof out === "string" ? out : JSON.stringify(out), isError: false });
      } catch (error) {
        const tag = ToolResolutionError.isInstance(error) ? "[ToolResolutionError]" : "[ToolError]";
        results.push({ tool: call.tool, args: call.args, content: `${tag} ${describeError(error)}`, isError: true });
      }
    }
  }
  throw new Error(`${scenario.name}: oracle did not reach a terminal tool within ${maxTurns} turns`);
}
