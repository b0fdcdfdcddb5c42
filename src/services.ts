/**
 * The workflow machine's services: the only place the loop touches the outside world.
 * `infer` serializes the history and calls the client (streaming through `onChunk`),
 * `compact` runs the ContextManager, `executeTool` runs one tool with its abort signal and
 * idempotency key. Each reports the wall clock so the machine's guards stay pure.
 */
import { fromPromise } from "xstate";
import type { CompactOutput, ExecuteToolInput, InferInput, InferOutput, CompactInput } from "../machines/workflow.machine.js";
import type { ContextManager } from "./context/context-manager.js";
import { StreamError } from "./core/errors.js";
import type { LLMClient, LLMResponse, StreamChunk } from "./core/llm.js";
import { serializeMessages, type ReasoningReplay } from "./core/messages.js";
import type { Workflow } from "./core/workflow.js";

export interface ServiceOptions {
  workflow: Workflow;
  client: LLMClient;
  contextManager: ContextManager;
  reasoningReplay: ReasoningReplay;
  stream: boolean;
  onChunk?: (chunk: StreamChunk) => void | Promise<void>;
  now: () => number;
}

/** @example createWorkflowMachine({ tools: wf.tools }).provide({ actors: createServices({ workflow: wf, client, ... }) }) */
export function createServices(o: ServiceOptions) {
  const { client, contextManager, workflow, now } = o;
  const specs = workflow.getToolSpecs();

  const infer = fromPromise<InferOutput, InferInput>(async ({ input, signal }) => {
      const wire = serializeMessages(input.messages, client.apiFormat, { reasoningReplay: o.reasoningReplay });
      let response: LLMResponse | undefined;
      if (o.stream && client.sendStream) {
        for await (const chunk of client.sendStream(wire, specs, { signal })) {
          if (o.onChunk) await o.onChunk(chunk);
          if (chunk.type === "final") response = chunk.response;
        }
        if (!response) throw new StreamError();
      } else {
        response = await client.send(wire, specs, { signal });
      }
      // Backends that report no usage still count against token budgets, by estimate.
      const usage = response.usage ?? {
        inputTokens: contextManager.estimateTokens(input.messages),
        outputTokens: Math.ceil(JSON.stringify(response).length / 4),
      };
      return { response, usage, now: now() };
  });

  const compact = fromPromise<CompactOutput, CompactInput>(async ({ input }) => {
    const { messages, event } = contextManager.compact(input.messages, { stepIndex: input.iteration, stepHint: input.stepHint });
    return { messages, event, now: now() };
  });

  const executeTool = fromPromise<unknown, ExecuteToolInput>(async ({ input, signal }) =>
    workflow.getTool(input.tool).execute(input.args, {
      signal,
      idempotencyKey: input.idempotencyKey,
      runId: input.runId,
      iteration: input.iteration,
      callIndex: input.index,
    }),
  );

  return { infer, compact, executeTool };
}
