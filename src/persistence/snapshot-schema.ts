/**
 * The persisted workflow snapshot as a zod schema: every field the machine, its guards and
 * the runner read after a restore. A snapshot is outside input (a file, a database row), and a
 * wrong type anywhere surfaced as a TypeError deep inside the statechart, or as a hang.
 * Unknown extra fields pass; the per-state rules that zod cannot say are in snapshot.ts.
 */
import { z } from "zod";
import { MessageSchema } from "../core/messages.js";
import { LLMResponseSchema, ToolCallSchema, UsageSchema } from "../core/response-contract.js";

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

const ErrorSchema = z.looseObject({
  name: z.string(),
  code: z.string(),
  message: z.string(),
  data: jsonObject,
  origin: z.enum(["infer", "compact", "loop"]).optional(),
});

/** @example WorkflowContextSchema.safeParse(snapshot.context).success */
export const WorkflowContextSchema = z.looseObject({
  runId: z.string(),
  workflow: z.string(),
  machineVersion: z.number(),
  messages: z.array(MessageSchema),
  iteration: count,
  toolNames: names,
  terminalTools: names,
  prerequisites: z.record(z.string(), z.array(PrerequisiteSchema)),
  steps: z.looseObject({ required: names, completed: z.array(z.looseObject({ tool: z.string(), args: z.unknown() })) }),
  counters: z.looseObject({ retries: count, toolErrors: count, premature: count, prereq: count }),
  callCounts: z.record(z.string(), count),
  budget: BudgetSchema,
  switches: z.looseObject({ rescueEnabled: z.boolean(), stepEnforcement: z.boolean() }),
  usage: UsageSchema,
  startedAt: z.number(),
  now: z.number(),
  lastResponse: LLMResponseSchema.optional(),
  validation: ValidationSchema.optional(),
  batch: BatchSchema.optional(),
  stats: StatsSchema,
  terminal: z.looseObject({ tool: z.string(), args: jsonObject, result: z.unknown() }).optional(),
  error: ErrorSchema.optional(),
});

/** The states a persisted snapshot can be in: waiting on a service, or final. Eventless states never persist. */
export const PERSISTABLE_STATES = ["compacting", "inferring", "executingTools.running", "done", "failed", "cancelled"] as const;

/** @example PersistedRunSchema.safeParse(JSON.parse(file)).success */
export const PersistedRunSchema = z.looseObject({
  status: z.enum(["active", "done"]),
  value: z.union([
    z.enum(["compacting", "inferring", "done", "failed", "cancelled"]),
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
  compact: z.looseObject({ messages: MessagesOrRef, iteration: count, stepHint: z.string() }),
  infer: z.looseObject({ messages: MessagesOrRef, iteration: count }),
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
