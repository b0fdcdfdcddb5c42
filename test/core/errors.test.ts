import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  BackendError,
  CallbackError,
  ClientContractError,
  GuardrailsExhaustedError,
  ToolResultError,
  ToolTimeoutError,
  BudgetExhaustedError,
  BudgetResolutionError,
  ContextBudgetExceeded,
  ContextDiscoveryError,
  ForgeError,
  HardwareDetectionError,
  InvalidArgumentError,
  MaxIterationsError,
  MissingPackageError,
  PrerequisiteError,
  ServerError,
  SnapshotError,
  StepEnforcementError,
  StreamError,
  ThinkingNotSupportedError,
  ToolCallError,
  ToolDefinitionError,
  ToolExecutionError,
  ToolResolutionError,
  UnsupportedModelError,
  WorkflowCancelledError,
  WorkflowDefinitionError,
  describeError,
  errorToJSON,
  reviveError,
  type ErrorJSON,
} from "../../src/core/errors.js";

interface Case {
  make: () => ForgeError;
  cls: new (...args: never[]) => ForgeError;
  code: string;
  data: Record<string, unknown>;
  /** Substrings the message must contain (the context it carries). */
  mentions: string[];
  revivable: boolean;
}

const cases: Case[] = [
  {
    make: () => new InvalidArgumentError("maxIterations", "must be a positive integer"),
    cls: InvalidArgumentError,
    code: "FORGE_INVALID_ARGUMENT",
    data: { argument: "maxIterations" },
    mentions: ["Invalid maxIterations: must be a positive integer"],
    revivable: false,
  },
  {
    make: () => new MissingPackageError("forge-ts/queue", ["bullmq", "ioredis"]),
    cls: MissingPackageError,
    code: "FORGE_MISSING_PACKAGE",
    data: { feature: "forge-ts/queue", packages: ["bullmq", "ioredis"] },
    mentions: ['forge-ts/queue needs the packages "bullmq" and "ioredis": npm install bullmq ioredis'],
    revivable: false,
  },
  {
    make: () => new WorkflowDefinitionError("bad terminal", "weather"),
    cls: WorkflowDefinitionError,
    code: "FORGE_WORKFLOW_DEFINITION",
    data: { workflow: "weather" },
    mentions: ['Workflow "weather": bad terminal'],
    revivable: false,
  },
  {
    make: () => new ToolDefinitionError("get_weather", "malformed schema"),
    cls: ToolDefinitionError,
    code: "FORGE_TOOL_DEFINITION",
    data: { toolName: "get_weather" },
    mentions: ['Tool "get_weather": malformed schema'],
    revivable: false,
  },
  {
    make: () => new ToolCallError("no valid call", { rawResponse: "I think...", attempt: 3, lastError: "bad json" }),
    cls: ToolCallError,
    code: "FORGE_TOOL_CALL",
    data: { rawResponse: "I think...", attempt: 3, lastError: "bad json" },
    mentions: ["no valid call"],
    revivable: true,
  },
  {
    make: () => new ToolExecutionError("search", "ECONNRESET", 2),
    cls: ToolExecutionError,
    code: "FORGE_TOOL_EXECUTION",
    data: { toolName: "search", lastError: "ECONNRESET", attempts: 2 },
    mentions: ['"search"', "2 consecutive", "ECONNRESET"],
    revivable: true,
  },
  {
    make: () => new MaxIterationsError(10, ["a", "b"], ["c"]),
    cls: MaxIterationsError,
    code: "FORGE_MAX_ITERATIONS",
    data: { iterations: 10, completedSteps: ["a", "b"], pendingSteps: ["c"] },
    mentions: ["10 iteration", "completed: [a, b]", "pending: [c]"],
    revivable: true,
  },
  {
    make: () => new BudgetExhaustedError("token_budget", 5000, 4000, ["a"]),
    cls: BudgetExhaustedError,
    code: "FORGE_BUDGET_EXHAUSTED",
    data: { reason: "token_budget", used: 5000, limit: 4000, completedSteps: ["a"] },
    mentions: ["token_budget", "5000", "4000"],
    revivable: true,
  },
  {
    make: () => new StepEnforcementError("answer", 3, ["search", "fetch"]),
    cls: StepEnforcementError,
    code: "FORGE_STEP_ENFORCEMENT",
    data: { terminalTool: "answer", attempts: 3, pendingSteps: ["search", "fetch"] },
    mentions: ['"answer"', "3 time", "[search, fetch]"],
    revivable: true,
  },
  {
    make: () => new PrerequisiteError("write", 2, ["read"]),
    cls: PrerequisiteError,
    code: "FORGE_PREREQUISITE",
    data: { toolName: "write", violations: 2, missingPrereqs: ["read"] },
    mentions: ['"write"', "2 time", "[read]"],
    revivable: true,
  },
  {
    make: () => new WorkflowCancelledError([{ role: "user", content: "hi" }], ["a"], 4, "user abort"),
    cls: WorkflowCancelledError,
    code: "FORGE_WORKFLOW_CANCELLED",
    data: { messages: [{ role: "user", content: "hi" }], completedSteps: ["a"], iteration: 4, reason: "user abort" },
    mentions: ["iteration 4", "user abort"],
    revivable: true,
  },
  {
    make: () => new ContextBudgetExceeded(9000, 8192, 3),
    cls: ContextBudgetExceeded,
    code: "FORGE_CONTEXT_BUDGET_EXCEEDED",
    data: { estimatedTokens: 9000, budgetTokens: 8192, phaseReached: 3 },
    mentions: ["9000", "8192", "phase 3"],
    revivable: true,
  },
  {
    make: () => new BudgetResolutionError(),
    cls: BudgetResolutionError,
    code: "FORGE_BUDGET_RESOLUTION",
    data: {},
    mentions: ["No context budget could be determined"],
    revivable: false,
  },
  {
    make: () => new HardwareDetectionError("unparseable nvidia-smi output", "garbage"),
    cls: HardwareDetectionError,
    code: "FORGE_HARDWARE_DETECTION",
    data: { output: "garbage" },
    mentions: ["nvidia-smi"],
    revivable: false,
  },
  {
    make: () => new ContextDiscoveryError("no num_ctx", "{}"),
    cls: ContextDiscoveryError,
    code: "FORGE_CONTEXT_DISCOVERY",
    data: { body: "{}" },
    mentions: ["no num_ctx"],
    revivable: false,
  },
  {
    make: () => new BackendError(503, "overloaded"),
    cls: BackendError,
    code: "FORGE_BACKEND",
    data: { statusCode: 503, body: "overloaded" },
    mentions: ["HTTP 503", "overloaded"],
    revivable: true,
  },
  {
    make: () => new ThinkingNotSupportedError("llama3", 400, "no think"),
    cls: ThinkingNotSupportedError,
    code: "FORGE_THINKING_NOT_SUPPORTED",
    data: { model: "llama3", statusCode: 400, body: "no think" },
    mentions: ['"llama3"', "think"],
    revivable: true,
  },
  {
    make: () => new StreamError(),
    cls: StreamError,
    code: "FORGE_STREAM",
    data: {},
    mentions: ["Stream ended without FINAL chunk"],
    revivable: true,
  },
  {
    make: () => new UnsupportedModelError("mystery-7b"),
    cls: UnsupportedModelError,
    code: "FORGE_UNSUPPORTED_MODEL",
    data: { model: "mystery-7b" },
    mentions: ['"mystery-7b"'],
    revivable: false,
  },
  {
    make: () => new SnapshotError("machine version mismatch", { expected: 2, actual: 1 }),
    cls: SnapshotError,
    code: "FORGE_SNAPSHOT",
    data: { expected: 2, actual: 1 },
    mentions: ["machine version mismatch"],
    revivable: false,
  },
  {
    make: () => new CallbackError("onMessage", new TypeError("cannot log")),
    cls: CallbackError,
    code: "FORGE_CALLBACK",
    data: { callback: "onMessage", error: "TypeError: cannot log" },
    mentions: ["onMessage callback failed", "TypeError: cannot log"],
    revivable: true,
  },
  {
    make: () => new ClientContractError("OllamaClient", ["content: expected string"], '{"type":"text"}'),
    cls: ClientContractError,
    code: "FORGE_CLIENT_CONTRACT",
    data: { client: "OllamaClient", issues: ["content: expected string"], received: '{"type":"text"}' },
    mentions: ["OllamaClient", "LLMResponse contract", "content: expected string", '{"type":"text"}'],
    revivable: true,
  },
  {
    make: () => new GuardrailsExhaustedError("tool_errors", 3, "get_weather: city is required"),
    cls: GuardrailsExhaustedError,
    code: "FORGE_GUARDRAILS_EXHAUSTED",
    data: { reason: "tool_errors", attempts: 3, lastError: "get_weather: city is required" },
    mentions: ["3 time(s)", "tool_errors", "city is required"],
    revivable: true,
  },
  {
    make: () => new ToolTimeoutError("search", 250),
    cls: ToolTimeoutError,
    code: "FORGE_TOOL_TIMEOUT",
    data: { toolName: "search", timeoutMs: 250 },
    mentions: ['"search"', "250 ms"],
    revivable: true,
  },
  {
    make: () => new ToolResultError("answer", "Do not know how to serialize a BigInt", true),
    cls: ToolResultError,
    code: "FORGE_TOOL_RESULT",
    data: { toolName: "answer", reason: "Do not know how to serialize a BigInt", terminal: true },
    mentions: ['"answer"', "not JSON-serializable", "BigInt"],
    revivable: true,
  },
  {
    make: () => new ServerError("llama-server exited", "CUDA out of memory"),
    cls: ServerError,
    code: "FORGE_SERVER",
    data: { stderrTail: "CUDA out of memory" },
    mentions: ["llama-server exited", "server stderr", "CUDA out of memory"],
    revivable: false,
  },
];

describe("error classes", () => {
  it.each(cases.map((c) => [c.code, c] as const))("%s: code, name, data, message, brand", (_code, c) => {
    const e = c.make();
    expect(e).toBeInstanceOf(c.cls);
    expect(e).toBeInstanceOf(ForgeError);
    expect(e).toBeInstanceOf(Error);
    expect(e.code).toBe(c.code);
    expect(e.name).toBe(c.cls.name);
    expect(e.data).toEqual(c.data);
    for (const m of c.mentions) expect(e.message).toContain(m);
    expect(ForgeError.isInstance(e)).toBe(true);
    expect(e.toJSON()).toEqual({ name: c.cls.name, code: c.code, message: e.message, data: c.data });
    expect(typeof e.stack).toBe("string");
  });

  it("every code is distinct", () => {
    const codes = cases.map((c) => c.code);
    expect(new Set(codes).size).toBe(codes.length);
  });

  it("the base ForgeError has its own code and empty data", () => {
    const e = new ForgeError("base");
    expect(e.code).toBe("FORGE_ERROR");
    expect(e.name).toBe("ForgeError");
    expect(e.data).toEqual({});
  });

  it("cause is kept", () => {
    const cause = new Error("root");
    expect(new ToolCallError("x", { cause }).cause).toBe(cause);
    expect(new ToolExecutionError("t", "e", 1, { cause }).cause).toBe(cause);
    expect(new ToolDefinitionError("t", "m", { cause }).cause).toBe(cause);
    expect(new BackendError(500, "b", undefined, { cause }).cause).toBe(cause);
    expect(new BudgetResolutionError(undefined, { cause }).cause).toBe(cause);
    expect(new StreamError(undefined, { cause }).cause).toBe(cause);
    expect(new ServerError("s", "", { cause }).cause).toBe(cause);
  });

  it("optional fields and message variants", () => {
    expect(new WorkflowDefinitionError("plain").message).toBe("plain");
    expect(new WorkflowDefinitionError("plain").data).toEqual({ workflow: undefined });
    expect(new ToolCallError("m").data).toEqual({ rawResponse: undefined, attempt: undefined, lastError: undefined });
    expect(new WorkflowCancelledError([], [], 2).message).toBe("Workflow cancelled at iteration 2");
    expect(new ContextBudgetExceeded(10, 5).message).not.toContain("phase");
    expect(new BudgetExhaustedError("wall_clock", 61, 60).completedSteps).toEqual([]);
    expect(new ServerError("only message").message).toBe("only message");
    expect(new SnapshotError("s").data).toEqual({});
    expect(new StreamError("custom").message).toBe("custom");
    expect(new BackendError(418, "teapot", "custom message").message).toBe("custom message");
  });

  it("BackendError truncates a long body in its default message but keeps the whole body", () => {
    const body = "x".repeat(2000);
    const e = new BackendError(500, body);
    expect(e.message.length).toBeLessThan(600);
    expect(e.body).toBe(body);
  });

  it("MaxIterationsError carries reason max_iterations", () => {
    expect(new MaxIterationsError(1, [], []).reason).toBe("max_iterations");
  });
});

describe("ThinkingNotSupportedError", () => {
  it("extends BackendError with defaults 400 and empty body", () => {
    const e = new ThinkingNotSupportedError("qwen3");
    expect(e).toBeInstanceOf(BackendError);
    expect(e.statusCode).toBe(400);
    expect(e.body).toBe("");
    expect(e.model).toBe("qwen3");
    expect(e.code).toBe("FORGE_THINKING_NOT_SUPPORTED");
  });
});

describe("ForgeError.isInstance", () => {
  it("accepts an error from a second copy of the library (carries the global brand)", () => {
    // Simulates another copy: a class unrelated by prototype that sets the same registry symbol.
    class OtherCopyError extends Error {
      readonly code = "FORGE_BACKEND";
      constructor(message: string) {
        super(message);
        Object.defineProperty(this, Symbol.for("forge-ts.error"), { value: true });
      }
    }
    const foreign = new OtherCopyError("from elsewhere");
    expect(foreign).not.toBeInstanceOf(ForgeError);
    expect(ForgeError.isInstance(foreign)).toBe(true);
    expect(ForgeError.isInstance({ [Symbol.for("forge-ts.error")]: true })).toBe(true);
  });

  it("rejects plain errors, look-alikes and non-objects", () => {
    expect(ForgeError.isInstance(new Error("x"))).toBe(false);
    expect(ForgeError.isInstance({ code: "FORGE_BACKEND", name: "BackendError" })).toBe(false);
    expect(ForgeError.isInstance({ [Symbol("forge-ts.error")]: true })).toBe(false);
    expect(ForgeError.isInstance({ [Symbol.for("forge-ts.error")]: "yes" })).toBe(false);
    for (const v of [null, undefined, 0, "FORGE_ERROR", true]) expect(ForgeError.isInstance(v)).toBe(false);
    expect(ForgeError.isInstance(new ToolResolutionError("not found"))).toBe(false);
  });
});

describe("ToolResolutionError", () => {
  it("is a plain Error, not a ForgeError", () => {
    const e = new ToolResolutionError("no user with id 7", "lookup_user");
    expect(e).toBeInstanceOf(Error);
    expect(e).not.toBeInstanceOf(ForgeError);
    expect(e.name).toBe("ToolResolutionError");
    expect(e.code).toBe("FORGE_TOOL_RESOLUTION");
    expect(e.toolName).toBe("lookup_user");
    expect(new ToolResolutionError("x").toolName).toBeUndefined();
  });

  it("has its own code-based isInstance", () => {
    expect(ToolResolutionError.isInstance(new ToolResolutionError("x"))).toBe(true);
    const foreign = Object.assign(new Error("other copy"), { code: "FORGE_TOOL_RESOLUTION" });
    expect(ToolResolutionError.isInstance(foreign)).toBe(true);
    expect(ToolResolutionError.isInstance(new Error("x"))).toBe(false);
    expect(ToolResolutionError.isInstance(new BackendError(500, ""))).toBe(false);
    expect(ToolResolutionError.isInstance({ code: "FORGE_TOOL_RESOLUTION", message: "not an Error" })).toBe(false);
  });
});

describe("toJSON → reviveError", () => {
  const revivable = cases.filter((c) => c.revivable);

  it.each(revivable.map((c) => [c.code, c] as const))("%s round-trips through JSON text", (_code, c) => {
    const original = c.make();
    const json = JSON.parse(JSON.stringify(original)) as ErrorJSON;
    const revived = reviveError(json);
    expect(revived).toBeInstanceOf(c.cls);
    expect(revived.constructor).toBe(c.cls);
    expect(revived.message).toBe(original.message);
    expect(revived.name).toBe(original.name);
    expect((revived as ForgeError).code).toBe(c.code);
    expect((revived as ForgeError).data).toEqual(c.data);
  });

  it("optional fields that were undefined stay undefined", () => {
    const e = reviveError(JSON.parse(JSON.stringify(new ToolCallError("bare"))) as ErrorJSON) as ToolCallError;
    expect(e).toBeInstanceOf(ToolCallError);
    expect(e.rawResponse).toBeUndefined();
    const c = reviveError(new ContextBudgetExceeded(3, 2).toJSON()) as ContextBudgetExceeded;
    expect(c.phaseReached).toBeUndefined();
    expect(c.message).toBe(new ContextBudgetExceeded(3, 2).message);
  });

  it("unknown codes come back as a plain Error with name and message", () => {
    const json = new UnsupportedModelError("m").toJSON();
    const e = reviveError(json);
    expect(e.constructor).toBe(Error);
    expect(e.name).toBe("UnsupportedModelError");
    expect(e.message).toBe(json.message);
  });

  it("tolerates a missing data object", () => {
    const e = reviveError({ name: "StreamError", code: "FORGE_STREAM", message: "cut" } as unknown as ErrorJSON);
    expect(e).toBeInstanceOf(StreamError);
    expect(e.message).toBe("cut");
  });

  it("property: MaxIterationsError and PrerequisiteError round-trip any fields", () => {
    const name = fc.string({ maxLength: 12 });
    fc.assert(
      fc.property(fc.nat(1000), fc.array(name, { maxLength: 5 }), fc.array(name, { maxLength: 5 }), (n, done, pending) => {
        const m = new MaxIterationsError(n, done, pending);
        const rm = reviveError(JSON.parse(JSON.stringify(m)) as ErrorJSON) as MaxIterationsError;
        expect(rm).toBeInstanceOf(MaxIterationsError);
        expect(rm.message).toBe(m.message);
        expect(rm.data).toEqual(m.data);
        const p = new PrerequisiteError(done[0] ?? "t", n, pending);
        const rp = reviveError(JSON.parse(JSON.stringify(p)) as ErrorJSON) as PrerequisiteError;
        expect(rp).toBeInstanceOf(PrerequisiteError);
        expect(rp.message).toBe(p.message);
        expect(rp.data).toEqual(p.data);
      }),
      { numRuns: 100 },
    );
  });
});

describe("errorToJSON", () => {
  it("uses toJSON for ForgeErrors", () => {
    const e = new BackendError(502, "bad gateway");
    expect(errorToJSON(e)).toEqual(e.toJSON());
  });

  it("keeps name, message and a string code of other errors", () => {
    expect(errorToJSON(new TypeError("nope"))).toEqual({ name: "TypeError", code: "ERR_UNKNOWN", message: "nope", data: {} });
    const sys = Object.assign(new Error("reset"), { code: "ECONNRESET" });
    expect(errorToJSON(sys)).toEqual({ name: "Error", code: "ECONNRESET", message: "reset", data: {} });
    const numeric = Object.assign(new Error("n"), { code: 42 });
    expect(errorToJSON(numeric).code).toBe("ERR_UNKNOWN");
    expect(errorToJSON(new ToolResolutionError("gone", "t"))).toMatchObject({ name: "ToolResolutionError", code: "FORGE_TOOL_RESOLUTION" });
  });

  it("stringifies non-errors", () => {
    expect(errorToJSON("boom")).toEqual({ name: "Error", code: "ERR_UNKNOWN", message: "boom", data: {} });
    expect(errorToJSON(42).message).toBe("42");
    expect(errorToJSON(undefined).message).toBe("undefined");
    expect(errorToJSON(null).message).toBe("null");
  });

  it("its output revives into an Error with the same message", () => {
    const revived = reviveError(errorToJSON(new RangeError("out of range")));
    expect(revived).toBeInstanceOf(Error);
    expect(revived.name).toBe("RangeError");
    expect(revived.message).toBe("out of range");
  });
});

describe("describeError", () => {
  it("renders name and message of errors", () => {
    expect(describeError(new TypeError("x is undefined"))).toBe("TypeError: x is undefined");
    expect(describeError(new PrerequisiteError("w", 1, ["r"]))).toMatch(/^PrerequisiteError: Model called "w"/);
    expect(describeError(new ToolResolutionError("no such id"))).toBe("ToolResolutionError: no such id");
  });

  it("stringifies other thrown values", () => {
    expect(describeError("plain string")).toBe("plain string");
    expect(describeError(7)).toBe("7");
    expect(describeError(undefined)).toBe("undefined");
    expect(describeError({ toString: () => "custom" })).toBe("custom");
  });
});

describe("hostile thrown values (hardening)", () => {
  const hostileMessage = () => Object.defineProperty(new Error("x"), "message", { get: () => { throw new Error("nope"); } });
  it("describeError and errorToJSON never throw", () => {
    expect(describeError({ toString: () => { throw new Error("nope"); } })).toBe("[object Object]");
    expect(describeError(hostileMessage())).toBe("Error: [unreadable message]");
    expect(errorToJSON(hostileMessage())).toMatchObject({ name: "Error", message: "[unreadable message]" });
    const badCode = Object.defineProperty(new Error("x"), "code", { get: () => { throw new Error("nope"); } });
    expect(errorToJSON(badCode)).toMatchObject({ code: "ERR_UNKNOWN", message: "x" });
    expect(ToolResolutionError.isInstance(badCode)).toBe(false);
  });
});
