/**
 * The tracer every forge-ts span comes from, and the attribute names we use. On
 * `@opentelemetry/api` only: with no SDK registered every call is a no-op, so forge-ts never
 * forces an SDK on its users. Names follow the OpenTelemetry GenAI semantic conventions
 * (`gen_ai.*`); forge's own additions are under `forge.*`.
 */
import { trace, type Tracer } from "@opentelemetry/api";
import { createRequire } from "node:module";

const version: string = (() => {
  try {
    return (createRequire(import.meta.url)("../../package.json") as { version?: string }).version ?? "0.0.0";
  } catch {
    // dist/src/telemetry is one level deeper than src/telemetry.
    return (createRequire(import.meta.url)("../../../package.json") as { version?: string }).version ?? "0.0.0";
  }
})();

/** The instrumentation scope's name, as a tracer provider sees it. */
export const TRACER_NAME = "forge-ts";

/** The instrumentation scope's version: forge-ts's own. */
export const TRACER_VERSION = version;

/**
 * The tracer, looked up at each call so a provider registered after import is used.
 *
 * @example
 * const span = forgeTracer().startSpan("invoke_agent support");
 */
export function forgeTracer(): Tracer {
  return trace.getTracer(TRACER_NAME, version);
}

/** GenAI semantic-convention attribute names (https://opentelemetry.io/docs/specs/semconv/gen-ai/). */
export const GenAI = {
  operationName: "gen_ai.operation.name",
  providerName: "gen_ai.provider.name",
  agentName: "gen_ai.agent.name",
  agentId: "gen_ai.agent.id",
  conversationId: "gen_ai.conversation.id",
  requestModel: "gen_ai.request.model",
  responseModel: "gen_ai.response.model",
  inputTokens: "gen_ai.usage.input_tokens",
  outputTokens: "gen_ai.usage.output_tokens",
  finishReasons: "gen_ai.response.finish_reasons",
  toolName: "gen_ai.tool.name",
  toolCallId: "gen_ai.tool.call.id",
  toolType: "gen_ai.tool.type",
  toolCallArguments: "gen_ai.tool.call.arguments",
  toolCallResult: "gen_ai.tool.call.result",
  inputMessages: "gen_ai.input.messages",
  outputMessages: "gen_ai.output.messages",
  errorType: "error.type",
} as const;

/** forge-ts's own attributes and span event names. */
export const Forge = {
  runId: "forge.run.id",
  outcome: "forge.run.outcome",
  state: "forge.machine.state",
  iteration: "forge.iteration",
  backend: "forge.backend",
  /** The run continues an earlier attempt (resume, retry, a worker taking it over). */
  resumed: "forge.run.resumed",
  iterations: "forge.run.iterations",
  toolStatus: "forge.tool.status",
  /** The tool did not run: its outcome was answered from the run's log (written ahead before a crash). */
  toolReplayed: "forge.tool.replayed",
  rescueFormat: "forge.rescue.format",
  nudgeReason: "forge.nudge.reason",
  prerequisiteTools: "forge.prerequisite.tools",
  loopBreakTools: "forge.loop_break.tools",
  tokensBefore: "forge.compaction.tokens_before",
  tokensAfter: "forge.compaction.tokens_after",
  compactionPhase: "forge.compaction.phase",
  humanRequests: "forge.human.requests",
  humanTools: "forge.human.tools",
  /** Span events for guardrail interventions. */
  events: {
    rescue: "forge.rescue",
    retryNudge: "forge.nudge.retry",
    stepNudge: "forge.nudge.step",
    prerequisiteBlock: "forge.prerequisite_block",
    loopBreak: "forge.loop_break",
    compaction: "forge.compaction",
    structuredOutputNudge: "forge.nudge.structured_output",
    humanWait: "forge.human_wait",
  },
} as const;
