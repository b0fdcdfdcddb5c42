/**
 * The persisted workflow snapshot as a zod schema: every field the machine, its guards and
 * the runner read after a restore. A snapshot is outside input (a file, a database row), and a
 * wrong type anywhere surfaced as a TypeError deep inside the statechart, or as a hang.
 * Unknown extra fields pass; the per-state rules that zod cannot say are in snapshot.ts.
 */
import { z } from "zod";
import { MessageSchema } from "../core/messages.js";
import { LLMResponseSchema, ToolCallSchema, UsageSchema } from "../core/response-contract.js";
import { WorkflowState } from "../loop/state-name.js";

const count = z.number().int().nonnegative();
const jsonObject = z.record(z.string(), z.unknown());
const names = z.array(z.string());

const PrerequisiteSchema = z.union([z.string(), z.looseObject({ tool: z.string(), args: jsonObject.optional() })]);

const BudgetSchema = z.looseObject({
  maxIterations: count,
  maxRetries: count,
  maxToolErrors: count,
  maxPremature: count,
  maxPrereq: count,
  maxToolRepeat: count,
  maxTotalTokens: z.number().positive().optional(),
  maxWallClockMs: z.number().positive().optional(),
  maxToolCallsPerResponse: z.number().int().positive().optional(),
  maxWaitMs: z.number().positive().optional(),
  onWaitTimeout: z.enum(["reject", "fail"]).optional(),
});

const NudgeSchema = z.looseObject({ role: z.enum(["user", "tool"]), content: z.string(), kind: z.string(), tier: count });

const ValidatedCallSchema = z.looseObject({
  tool: z.string(),
  args: jsonObject,
  id: z.string().optional(),
  reasoning: z.string().optional(),
});

const ValidationSchema = z.discriminatedUnion("kind", [
  z.looseObject({ kind: z.literal("calls"), calls: z.array(ValidatedCallSchema), rescued: z.boolean() }),
  z.looseObject({ kind: z.literal("retry"), nudge: NudgeSchema, raw: z.string() }),
  z.looseObject({
    kind: z.literal("rejected"),
    calls: z.array(ToolCallSchema),
    rejections: z.array(
      z.looseObject({ index: count, tool: z.string(), kind: z.enum(["unknown_tool", "invalid_args", "batch_skipped"]), message: z.string() }),
    ),
    rescued: z.boolean(),
  }),
]);

const BatchSchema = z.looseObject({
  calls: z.array(z.looseObject({ tool: z.string(), args: jsonObject, callId: z.string() })),
  done: z.array(
    z.looseObject({ index: count, tool: z.string(), callId: z.string(), status: z.enum(["ok", "error", "resolution"]), content: z.string() }),
  ),
  human: z
    .array(
      z.looseObject({
        callId: z.string(),
        index: count,
        tool: z.string(),
        args: jsonObject,
        kind: z.enum(["approval", "input"]),
        askedAt: z.number(),
        parameters: jsonObject,
        decision: z
          .union([
            z.looseObject({ type: z.literal("approve"), args: jsonObject.optional(), at: z.number() }),
            z.looseObject({ type: z.literal("reject"), reason: z.string(), at: z.number() }),
            z.looseObject({ type: z.literal("answer"), answer: z.unknown(), at: z.number() }),
          ])
          .optional(),
      }),
    )
    .optional(),
});

const StatsSchema = z.looseObject({
  toolCalls: count,
  rescues: count,
  retryNudges: count,
  stepNudges: count,
  prereqNudges: count,
  toolErrors: count,
  loopBreaks: count,
  compactions: z.array(z.looseObject({ phase: count, tokensBefore: z.number(), tokensAfter: z.number(), iteration: count })),
});

/** The loop-break hash trie (src/loop/call-counts.ts): leaves of counts under 16-way branches. */
type CallCountTrieShape = { counts: Record<string, number> } | { slots: Record<string, CallCountTrieShape> };
const CallCountTrieSchema: z.ZodType<CallCountTrieShape> = z.lazy(() =>
  z.union([z.strictObject({ counts: z.record(z.string(), count) }), z.strictObject({ slots: z.record(z.string(), CallCountTrieSchema) })]),
);

const ErrorSchema = z.looseObject({
  name: z.string(),
  code: z.string(),
  message: z.string(),
  data: jsonObject,
  origin: z.enum(["infer", "compact", "loop"]).optional(),
});

/** @example WorkflowContextSchema.safeParse(snapshot.context).success */
export const WorkflowContextSchema = z.looseObject({
  machineVersion: z.number(),
  run: z.looseObject({
    id: z.string(),
    workflow: z.string(),
    toolNames: names,
    terminalTools: names,
    prerequisites: z.record(z.string(), z.array(PrerequisiteSchema)),
    budget: BudgetSchema,
    switches: z.looseObject({ rescueEnabled: z.boolean(), stepEnforcement: z.boolean() }),
    startedAt: z.number(),
    // Replaced on resume by the resuming runner's trigger.
    compactAt: count.nullable(),
    parent: z.looseObject({ runId: z.string(), callId: z.string() }).optional(),
  }),
  messages: z.array(MessageSchema),
  iteration: count,
  // completedTools is a running summary of completed: recomputed on resume.
  steps: z.looseObject({ required: names, completed: z.array(z.looseObject({ tool: z.string(), args: z.unknown() })), completedTools: names }),
  counters: z.looseObject({ retries: count, toolErrors: count, premature: count, prereq: count }),
  callCounts: CallCountTrieSchema,
  // A running total of the messages' estimate: recomputed on resume.
  historyTokens: count,
  usage: UsageSchema,
  now: z.number(),
  lastResponse: LLMResponseSchema.optional(),
  validation: ValidationSchema.optional(),
  batch: BatchSchema.optional(),
  stats: StatsSchema,
  terminal: z.looseObject({ tool: z.string(), args: jsonObject, result: z.unknown() }).optional(),
  error: ErrorSchema.optional(),
});

/** The states a persisted snapshot can be in: waiting on a service or a person, or final. Eventless states never persist. */
export const PERSISTABLE_STATES = [
  WorkflowState.compactingRunning,
  WorkflowState.inferring,
  WorkflowState.awaitingHuman,
  WorkflowState.executingToolsRunning,
  WorkflowState.done,
  WorkflowState.failed,
  WorkflowState.cancelled,
] as const;

/** @example PersistedRunSchema.safeParse(JSON.parse(file)).success */
export const PersistedRunSchema = z.looseObject({
  status: z.enum(["active", "done"]),
  value: z.union([
    z.enum(["inferring", "awaitingHuman", "done", "failed", "cancelled"]),
    z.strictObject({ compacting: z.literal("running") }),
    z.strictObject({ executingTools: z.literal("running") }),
  ]),
  // The machine has no history states: anything here would name state nodes XState cannot find.
  historyValue: z.strictObject({}).optional(),
  context: WorkflowContextSchema,
  children: z.record(z.string(), z.unknown()).optional(),
});

/** Stands for `context.messages` inside a persisted service input. */
export const CONTEXT_MESSAGES_REF = "$context.messages";

const MessagesOrRef = z.union([z.literal(CONTEXT_MESSAGES_REF), z.array(MessageSchema)]);

/** What each service's persisted child must look like: XState re-runs it with this input. */
export const SERVICE_INPUT_SCHEMAS = {
  // tokens: recomputed on resume (the service input's running total).
  compact: z.looseObject({ messages: MessagesOrRef, iteration: count, stepHint: z.string(), tokens: count.optional() }),
  infer: z.looseObject({ messages: MessagesOrRef, iteration: count, tokens: count.optional() }),
  executeTool: z.looseObject({
    runId: z.string(),
    tool: z.string(),
    args: jsonObject,
    callId: z.string(),
    index: count,
    iteration: count,
    idempotencyKey: z.string(),
  }),
} as const;

/** A persisted in-flight child: only an active promise actor is re-run on restore (a done one would never report back). */
export const childSchema = (src: keyof typeof SERVICE_INPUT_SCHEMAS) =>
  z.looseObject({
    src: z.literal(src),
    snapshot: z.looseObject({ status: z.literal("active"), input: SERVICE_INPUT_SCHEMAS[src] }),
    syncSnapshot: z.boolean().optional(),
    systemId: z.undefined().optional(),
  });

/** zod issues as "path: message" lines for a SnapshotError. */
export function issueLines(error: z.ZodError, prefix = ""): string[] {
  return error.issues.map((i) => {
    const path = [prefix, ...i.path.map(String)].filter((p) => p.length > 0).join(".");
    return path ? `${path}: ${i.message}` : i.message;
  });
}
