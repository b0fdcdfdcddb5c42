import { describe, expect, it } from "vitest";
import { ContextManager, NoCompact, TieredCompact } from "../../src/context/index.js";
import {
  BackendError,
  ContextBudgetExceeded,
  InvalidArgumentError,
  StreamError,
  WorkflowCancelledError,
  type LLMClient,
  type Message,
  type StreamChunk,
} from "../../src/core/index.js";
import { WorkflowRunner } from "../../src/runner.js";
import { call, loopWorkflow, PolicyClient, scriptThenCorrect, turnOf } from "../support/loop-fixtures.js";

const vars = { promptVars: { company: "Acme" } };
const cm = () => new ContextManager({ strategy: new NoCompact(), budgetTokens: 100_000 });

describe("cancellation", () => {
  it("an AbortSignal aborts in-flight inference and rejects with WorkflowCancelledError", async () => {
    const { workflow } = loopWorkflow();
    let inferSignal: AbortSignal | undefined;
    const controller = new AbortController();
    const client = new PolicyClient((messages, _tools, signal) => {
      if (turnOf(messages) < 1) return call("fetch_a", { n: 1 });
      inferSignal = signal;
      const pending = new Promise<never>((_resolve, reject) => signal?.addEventListener("abort", () => reject(signal.reason), { once: true }));
      // The user presses stop while the second model call is in flight (not on a timer that
      // could fire before the call starts on a loaded machine).
      queueMicrotask(() => controller.abort(new Error("user pressed stop")));
      return pending;
    });
    const runner = new WorkflowRunner({ client, contextManager: cm() });
    const error = await runner.run(workflow, "go", { ...vars, signal: controller.signal }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WorkflowCancelledError);
    expect(error).toMatchObject({ iteration: 1, completedSteps: ["fetch_a"], reason: "user pressed stop" });
    expect((error as WorkflowCancelledError).messages.length).toBeGreaterThan(2);
    expect(inferSignal?.aborted).toBe(true);
    expect(runner.lastRunStats?.outcome).toBe("cancelled");
  });

  it("the workflow.cancel event stops a running tool and aborts its signal", async () => {
    const { workflow } = loopWorkflow();
    let toolSignal: AbortSignal | undefined;
    const slow = { ...workflow.tools.fetch_a! };
    const patched = Object.assign(Object.create(Object.getPrototypeOf(workflow)), workflow, {
      tools: { ...workflow.tools, fetch_a: { ...slow, execute: (_a: unknown, ctx: { signal: AbortSignal }) => { toolSignal = ctx.signal; return new Promise(() => undefined); } } },
    });
    const runner = new WorkflowRunner({
      client: new PolicyClient(scriptThenCorrect([])),
      contextManager: cm(),
      onStateChange: (s) => s === "executingTools.running" && queueMicrotask(() => runner.actor?.send({ type: "workflow.cancel", reason: "enough" })),
    });
    await expect(runner.run(patched, "go", vars)).rejects.toBeInstanceOf(WorkflowCancelledError);
    expect(toolSignal?.aborted).toBe(true);
  });

  it("an already-aborted signal cancels before any inference", async () => {
    const { workflow } = loopWorkflow();
    const client = new PolicyClient(scriptThenCorrect([]));
    const runner = new WorkflowRunner({ client, contextManager: cm() });
    await expect(runner.run(workflow, "go", { ...vars, signal: AbortSignal.abort() })).rejects.toBeInstanceOf(WorkflowCancelledError);
    expect(client.requests.length).toBeLessThanOrEqual(1);
  });
});

describe("streaming", () => {
  it("awaits onChunk for every chunk before acting on FINAL", async () => {
    const { workflow } = loopWorkflow();
    const seen: string[] = [];
    const runner = new WorkflowRunner({
      client: new PolicyClient(scriptThenCorrect([])),
      contextManager: cm(),
      stream: true,
      onChunk: async (chunk) => {
        await new Promise((r) => setTimeout(r, 1));
        seen.push(chunk.type);
      },
    });
    await runner.run(workflow, "go", vars);
    expect(seen.filter((t) => t === "final")).toHaveLength(3);
    expect(seen.filter((t) => t === "tool_call_delta")).toHaveLength(3);
  });

  it("a stream without FINAL fails the run with StreamError", async () => {
    const { workflow } = loopWorkflow();
    const client: LLMClient = {
      apiFormat: "openai",
      send: () => Promise.reject(new Error("unused")),
      async *sendStream(): AsyncIterable<StreamChunk> {
        yield { type: "text_delta", content: "partial" };
      },
      getContextLength: async () => undefined,
    };
    const runner = new WorkflowRunner({ client, contextManager: cm(), stream: true });
    await expect(runner.run(workflow, "go", vars)).rejects.toBeInstanceOf(StreamError);
  });

  it("rejects stream: true for a client without sendStream", () => {
    const client: LLMClient = { apiFormat: "openai", send: () => Promise.reject(new Error("x")), getContextLength: async () => undefined };
    expect(() => new WorkflowRunner({ client, contextManager: cm(), stream: true })).toThrow(InvalidArgumentError);
  });
});

describe("backend errors", () => {
  it("rethrows the client's own BackendError (not a copy)", async () => {
    const { workflow } = loopWorkflow();
    const boom = new BackendError(503, "overloaded");
    const runner = new WorkflowRunner({ client: new PolicyClient(() => Promise.reject(boom)), contextManager: cm() });
    await expect(runner.run(workflow, "go", vars)).rejects.toBe(boom);
    expect(runner.lastRunStats?.error).toMatchObject({ code: "FORGE_BACKEND" });
  });
});

describe("reasoning replay", () => {
  const reasoned = scriptThenCorrect([{ type: "tool_calls", toolCalls: [{ tool: "fetch_a", args: {} }], reasoning: "THOUGHT-1" }, { type: "tool_calls", toolCalls: [{ tool: "fetch_b", args: {} }], reasoning: "THOUGHT-2" }]);
  const lastRequest = async (replay: "none" | "keep-last" | "full") => {
    const { workflow } = loopWorkflow();
    const client = new PolicyClient(reasoned);
    await new WorkflowRunner({ client, contextManager: cm(), reasoningReplay: replay }).run(workflow, "go", vars);
    return JSON.stringify(client.requests.at(-1));
  };
  it("none drops reasoning from the wire", async () => {
    const wire = await lastRequest("none");
    expect(wire).not.toContain("THOUGHT");
  });
  it("keep-last folds only the latest reasoning into its tool-call message", async () => {
    const wire = await lastRequest("keep-last");
    expect(wire).not.toContain("THOUGHT-1");
    expect(wire).toContain("THOUGHT-2");
  });
  it("full folds every reasoning", async () => {
    const wire = await lastRequest("full");
    expect(wire).toContain("THOUGHT-1");
    expect(wire).toContain("THOUGHT-2");
  });
});

/** Step tracking is per run (seed): a new turn walks the required steps again. */
function turnTwo(summary: string) {
  let n = 0;
  return () => [call("fetch_a", { n: 1 }), call("fetch_b", { n: 2 }), call("finish", { summary })][n++]!;
}

describe("messages and turns", () => {
  it("onMessage fires for new messages only, not for initialMessages", async () => {
    const { workflow } = loopWorkflow();
    const first: Message[] = [];
    const runner = new WorkflowRunner({ client: new PolicyClient(scriptThenCorrect([])), contextManager: cm(), onMessage: (m) => first.push(m) });
    await runner.run(workflow, "turn one", vars);
    const history = runner.snapshot().context.messages;
    const second: Message[] = [];
    const runner2 = new WorkflowRunner({ client: new PolicyClient(turnTwo("again")), contextManager: cm(), onMessage: (m) => second.push(m) });
    await expect(runner2.run(workflow, "turn two", { initialMessages: history })).resolves.toEqual({ done: "again" });
    expect(second.every((m) => !history.includes(m))).toBe(true);
    expect(second.map((m) => m.meta.type)).toEqual(["tool_call", "tool_result", "tool_call", "tool_result", "tool_call", "tool_result"]);
    const finalMessages = runner2.snapshot().context.messages;
    expect(finalMessages.slice(0, history.length)).toEqual(history);
    expect(finalMessages[history.length]).toMatchObject({ role: "user", content: "turn two", meta: { type: "user_input" } });
  });

  it("a finished run's snapshot seeds the next turn via { from }", async () => {
    const { workflow } = loopWorkflow();
    const runner = new WorkflowRunner({ client: new PolicyClient(scriptThenCorrect([])), contextManager: cm() });
    await runner.run(workflow, "turn one", vars);
    const snap = JSON.parse(JSON.stringify(runner.snapshot()));
    const client2 = new PolicyClient(turnTwo("turn two done"));
    const runner2 = new WorkflowRunner({ client: client2, contextManager: cm() });
    await expect(runner2.run(workflow, "and now?", { from: snap })).resolves.toEqual({ done: "turn two done" });
    expect(JSON.stringify(client2.requests[0])).toContain("turn one");
  });

  it("compaction runs under a tight budget and keeps system prompt and first input", async () => {
    const { workflow } = loopWorkflow();
    const events: number[] = [];
    const long = "x".repeat(3000);
    const client = new PolicyClient(scriptThenCorrect([call("extra", { n: 1 }), call("extra", { n: 2 }), call("extra", { n: 3 })]));
    const runner = new WorkflowRunner({
      client,
      contextManager: new ContextManager({ strategy: new TieredCompact({ keepRecent: 1 }), budgetTokens: 2600 }),
    });
    runner.options; // options are frozen and public
    const patched = loopWorkflow().workflow;
    void patched;
    const wf = Object.assign(Object.create(Object.getPrototypeOf(workflow)), workflow, {
      tools: { ...workflow.tools, extra: { ...workflow.tools.extra!, execute: () => long } },
    });
    await runner.run(wf, "go", vars);
    for (const c of runner.lastRunStats!.compactions) events.push(c.phase);
    expect(events.length).toBeGreaterThan(0);
    const final = runner.snapshot().context.messages;
    expect(final[0]!.meta.type).toBe("system_prompt");
    expect(final[1]).toMatchObject({ meta: { type: "user_input" }, content: "go" });
  });

  it("ContextBudgetExceeded fails the run when even the strongest phase is over budget", async () => {
    const { workflow } = loopWorkflow();
    const runner = new WorkflowRunner({
      client: new PolicyClient(scriptThenCorrect([])),
      contextManager: new ContextManager({ strategy: new TieredCompact(), budgetTokens: 20 }),
    });
    await expect(runner.run(workflow, "go".repeat(200), vars)).rejects.toBeInstanceOf(ContextBudgetExceeded);
  });
});

describe("options", () => {
  const client = new PolicyClient(scriptThenCorrect([]));
  it.each([
    [{ maxIterations: 0 }, "maxIterations"],
    [{ maxRetries: -1 }, "maxRetries"],
    [{ maxToolErrors: 1.5 }, "maxToolErrors"],
    [{ maxTotalTokens: 0 }, "maxTotalTokens"],
    [{ reasoningReplay: "some" as "none" }, "reasoningReplay"],
  ])("rejects %o naming %s", (bad, name) => {
    expect(() => new WorkflowRunner({ client, contextManager: cm(), ...bad })).toThrow(new RegExp(name));
  });
  it("requires a client and a context manager", () => {
    expect(() => new WorkflowRunner({ client: undefined as never, contextManager: cm() })).toThrow(/client/);
    expect(() => new WorkflowRunner({ client, contextManager: undefined as never })).toThrow(/contextManager/);
  });
  it("gives each tool a stable idempotency key runId:iteration:index", async () => {
    const { workflow, log } = loopWorkflow();
    await new WorkflowRunner({ client, contextManager: cm() }).run(workflow, "go", { ...vars, runId: "run-1" });
    expect(log.map((e) => e.key)).toEqual(["run-1:1:0", "run-1:2:0", "run-1:3:0"]);
  });
});

describe("inspection", () => {
  it("the inspect option receives XState inspection events for the run's actors", async () => {
    const { workflow } = loopWorkflow();
    const types = new Set<string>();
    const runner = new WorkflowRunner({
      client: new PolicyClient(scriptThenCorrect([])),
      contextManager: cm(),
      inspect: (event) => types.add(event.type),
    });
    await runner.run(workflow, "go", vars);
    expect([...types]).toEqual(expect.arrayContaining(["@xstate.actor", "@xstate.event", "@xstate.snapshot", "@xstate.microstep"]));
    expect(runner.actor?.getSnapshot().value).toBe("done");
  });
});
