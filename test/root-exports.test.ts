/**
 * The root entry's runtime names, in full: a name added to or removed from `forge-ts` is a
 * decision made here (and in CHANGELOG.md), not a side effect of a barrel. The internals the
 * root stopped exporting stay out, the test doubles live in `forge-ts/testing`, and each
 * deprecated second way warns once and still works.
 */
import { describe, expect, it } from "vitest";
import * as root from "../src/index.js";
import * as testing from "../src/testing.js";

const ROOT_NAMES = [
    "AnthropicClient", "assertLLMResponse", "BackendBusyError", "BackendError", "BudgetExhaustedError",
    "BudgetMode", "BudgetResolutionError", "buildToolPrompt", "CallbackError", "checkStructuredOutput",
    "childRunsOf", "ChildWorkflowError", "ChunkType", "ClientContractError", "consoleLogger",
    "ContextBudgetExceeded", "ContextDiscoveryError", "ContextManager", "CorruptRecordError",
    "createForgeMetrics", "createMessage", "createProxy", "createWorkflowMachine", "DEFAULT_LEASE_MS",
    "defineTool", "detectHardware", "errorToJSON", "estimateTokensChars4", "EvalFixtureError",
    "extractJsonAnswer", "extractToolCalls", "extractTraceCarrier", "FileRunStore", "Forge",
    "ForgeError", "forgeTracer", "forkRun", "GenAI", "getSamplingDefaults", "Guardrails",
    "GuardrailsExhaustedError", "HardwareDetectionError", "HumanDecisionError", "humanInputTool",
    "HumanWaitTimeoutError", "injectTraceCarrier", "InvalidArgumentError", "isDamaged",
    "LlamafileClient", "loadProxyConfig", "MACHINE_VERSION", "MaxIterationsError", "McpServerError",
    "McpToolError", "MemoryRunStore", "MessageRole", "MessageType", "metricsResponse",
    "MissingPackageError", "NoCompact", "OllamaClient", "OpenAICompatClient", "parentLinkOf",
    "parsePolicy", "parseProxyConfig", "PrerequisiteError", "ProxyConfigError", "proxyRequestMachine",
    "recordDecision", "replayRun", "RESCUE_FORMATS", "rescueToolCall", "RESPOND_TOOL_NAME",
    "respondTool", "reviveError", "RunLockedError", "RunLockLostError", "RunNotReplayableError",
    "RunWaitingError", "schemaOracle", "SchemaOracleError", "serializeMessages", "serveMetrics",
    "ServerError", "ServerManager", "SessionTurnFailedError", "setupBackend", "SimulatedClient",
    "SlidingWindowCompact", "SnapshotError", "splitReasoning", "StepEnforcementError", "StoreError",
    "StreamError", "textResponse", "ThinkingNotSupportedError", "TieredCompact", "toApiMessage",
    "ToolCallError", "toolCallsResponse", "ToolDefinitionError", "ToolExecutionError",
    "ToolResolutionError", "ToolResultError", "ToolTimeoutError", "TRACER_NAME",
    "UnsupportedModelError", "wireMessageOf", "Workflow", "WorkflowCancelledError",
    "WorkflowDefinitionError", "workflowMachine", "WorkflowRunner", "workflowTool",
];

describe("forge-ts root exports", () => {
  it("are exactly the chosen names, at most ~120", () => {
    expect(Object.keys(root).sort()).toEqual([...ROOT_NAMES].sort());
    expect(ROOT_NAMES.length).toBeLessThanOrEqual(120);
  });

  it("leave out internals and test doubles, which forge-ts/testing has", () => {
    const internals = ["CORRECTION_DAMPING", "MAX_TIMER_MS", "SERVICE_NAMES", "resetSamplingInfoLog", "retryNudge", "loopBreakMessage", "canonicalJson", "jsonEqual", "isPlainObject", "diffJson", "interventionsBetween", "ErrorTracker", "StepEnforcer"];
    for (const name of [...internals, "ScriptedClient", "FAULT_PROFILES"]) expect(Object.keys(root), name).not.toContain(name);
    expect(Object.keys(testing)).toEqual(expect.arrayContaining(["ScriptedClient", "SimulatedClient", "schemaOracle", "FAULT_PROFILES", "supplierQuoteWorkflow"]));
  });

  it("keep each deprecated second way working, with a DeprecationWarning naming the one way", async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on("warning", onWarning);
    try {
      const message = root.createMessage("user", "hi", root.MessageType.USER_INPUT);
      expect(root.toApiMessage(message, "openai")).toEqual(root.serializeMessages([message], "openai")[0]);
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.map((w) => [w.name, (w as Error & { code?: string }).code, w.message])).toContainEqual([
        "DeprecationWarning",
        "FORGE_DEP_TO_API_MESSAGE",
        "forge-ts: toApiMessage(message, format) is deprecated; use serializeMessages(messages, format)",
      ]);
    } finally {
      process.off("warning", onWarning);
    }
  });
});
