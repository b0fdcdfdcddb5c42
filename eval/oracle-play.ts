/**
 * Play a scenario's oracle straight against its own tools, with no model and no runner: the
 * reference path every scenario must support (used by the suite's self-test). A guarded call
 * goes to the scenario's person first, with the runner's outcomes: a rejection is a
 * `[Rejected]` result, an answer is the result, an approval may edit the arguments.
 */
import { describeError, isPlainObject, ToolResolutionError, type AnyToolDef } from "../src/core/index.js";
import { rejectedMessage } from "../src/guardrails/nudges.js";
import { humanKind, type HumanDecision } from "../src/loop/human.js";
import { rescueToolCall } from "../src/parsing/index.js";
import { withFixtures } from "./fixture.js";
import type { EvalScenario, OracleView, TerminalCall } from "./scenario.js";

export interface OraclePlay {
  turns: number;
  terminal: TerminalCall;
  valid: boolean;
  results: OracleView["results"];
}

/**
 * A step the oracle writes as text is played as the runner's rescue parser reads it (a scenario
 * whose model has no native tool calls); text with no call in it is an error.
 *
 * @example
 * const play = await playOracle(basic2step); // { turns: 2, valid: true, ... }
 */
export async function playOracle(scenario: EvalScenario, maxTurns = scenario.maxIterations): Promise<OraclePlay> {
  return withFixtures([scenario], () => play(scenario, maxTurns));
}

async function play(scenario: EvalScenario, maxTurns: number): Promise<OraclePlay> {
  const { workflow, state } = scenario.build();
  const results: OracleView["results"] = [];
  for (let turn = 1; turn <= maxTurns; turn++) {
    const step = scenario.oracle({ results: [...results], userInput: scenario.userInput, toolNames: workflow.toolNames, turn });
    const calls = "text" in step ? rescued(scenario, step.text, workflow.toolNames) : "calls" in step ? step.calls : [step];
    if (calls.length === 0) throw new Error(`${scenario.name}: oracle answered with text and no call on turn ${turn}`);
    for (const [i, call] of calls.entries()) {
      const tool = workflow.getTool(call.tool);
      const parsed = tool.validateArgs(call.args);
      if (!parsed.ok) throw new Error(`${scenario.name}: oracle args for ${call.tool} invalid: ${JSON.stringify(parsed.issues)}`);
      const ctx = { signal: new AbortController().signal, idempotencyKey: `play:${turn}:${i}`, runId: "play", iteration: turn, callIndex: i };
      const decision = decide(scenario, tool, parsed.value, ctx.idempotencyKey, i, turn);
      if (decision && decision.type !== "approve") {
        const content = decision.type === "reject" ? rejectedMessage(call.tool, decision.reason) : answerText(decision.answer);
        results.push({ tool: call.tool, args: call.args, content, isError: decision.type === "reject" });
        continue;
      }
      let args = parsed.value;
      if (decision?.args !== undefined) {
        const edited = tool.validateArgs(decision.args);
        if (!edited.ok) throw new Error(`${scenario.name}: the person's edited args for ${call.tool} are invalid: ${JSON.stringify(edited.issues)}`);
        args = edited.value;
      }
      try {
        const out = await tool.execute(args, ctx);
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

/** The person's decision when the call needs one (as the runner asks), else undefined. */
function decide(scenario: EvalScenario, tool: AnyToolDef, args: Record<string, unknown>, callId: string, index: number, turn: number): HumanDecision | undefined {
  const kind = humanKind(tool, args, { runId: "play", iteration: turn });
  if (!kind) return undefined;
  if (!scenario.person) throw new Error(`${scenario.name}: ${tool.name} asks a person, but the scenario has none`);
  return scenario.person({ callId, index, tool: tool.name, args, kind, askedAt: 0, parameters: tool.spec.parameters });
}

/** The calls in a text step, as the runner's rescue parser reads them. */
function rescued(scenario: EvalScenario, text: string, toolNames: readonly string[]): { tool: string; args: Record<string, unknown> }[] {
  return rescueToolCall(text, toolNames).map((c) => {
    if (!isPlainObject(c.args)) throw new Error(`${scenario.name}: a call the oracle wrote as text has non-object args: ${text}`);
    return { tool: c.tool, args: c.args };
  });
}

function answerText(answer: unknown): string {
  return typeof answer === "string" ? answer : JSON.stringify(answer);
}
