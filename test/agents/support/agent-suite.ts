/**
 * The cases every agent runs (all of them, or CI's share: `agentCases`), as one vitest suite per
 * agent file (so the files run in parallel): each case through the proxy must create hello.txt;
 * the text-call cases run directly against the same model must not (the lift). Prints the agent's lift-table row and
 * the file's run time at the end.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENTS, type AgentName } from "./agent-setup.js";
import { expectProxyDidTheWork, expectTextCallNeverRun } from "./case-expect.js";
import { caseKey, type CaseOutcome } from "./case-spec.js";
import { LIFT_HEADER, liftRow } from "./lift-table.js";
import { runCases } from "./run-case.js";
import { agentCases, FILE_CONTENT, type CaseName } from "./turn-policy.js";

// Agents take seconds to start; a generous bound per case, enforced inside the case runner
// (it kills the agent's process group) well before vitest's own timeout.
const AGENT_TIMEOUT_MS = 90_000;
const TEST_TIMEOUT_MS = 150_000;
/** Cases of one agent run at a time (each file is its own batch; files run in parallel too). */
const CONCURRENCY = Number(process.env.FORGE_AGENT_CONCURRENCY ?? 2);

const diagnosis = (o: CaseOutcome): string =>
  JSON.stringify({ exitCode: o.exitCode, timedOut: o.timedOut, file: o.file, proxy: o.proxy, requests: o.requests, turns: o.turns, stdout: o.stdout, stderr: o.stderr }, null, 1);

/**
 * @example
 * agentSuite("opencode"); // the whole of test/agents/opencode.test.ts
 */
export function agentSuite(agent: AgentName): void {
  const cases = agentCases(agent, AGENTS);
  const outcomes: CaseOutcome[] = [];
  let started = 0;
  let batch = new Map<string, Promise<CaseOutcome>>();
  const outcome = async (kase: CaseName, mode: "proxy" | "direct"): Promise<CaseOutcome> => {
    const o = await batch.get(caseKey({ agent, case: kase, mode }))!;
    outcomes.push(o);
    return o;
  };
  beforeAll(() => {
    started = performance.now();
    const runs = [...cases.proxy.map((c) => ({ case: c, mode: "proxy" as const })), ...cases.direct.map((c) => ({ case: c, mode: "direct" as const }))];
    batch = runCases(runs.map((c) => ({ agent, ...c, timeoutMs: AGENT_TIMEOUT_MS })), CONCURRENCY);
  });
  afterAll(() => {
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    console.log(`[agents] ${agent}: ${outcomes.length} runs in ${seconds} s\n${LIFT_HEADER}\n${liftRow(agent, outcomes)}`);
  });

  describe(`${agent} through forge-ts proxy`, () => {
    it.each(cases.proxy)("%s: finishes the task (hello.txt contains forge)", { timeout: TEST_TIMEOUT_MS }, async (kase) => {
      const o = await outcome(kase, "proxy");
      expect(o.file, diagnosis(o)).toBe(FILE_CONTENT);
      expect(o.exitCode, diagnosis(o)).toBe(0);
      expectProxyDidTheWork(kase, o.proxy, diagnosis(o));
    });
  });

  describe(`${agent} directly against the model (no proxy)`, () => {
    it.each(cases.direct)("%s: the call written as text is never run", { timeout: TEST_TIMEOUT_MS }, async (kase) => {
      const o = await outcome(kase, "direct");
      // The agent ended its run on its own (no timeout) without running the call.
      expect(o.timedOut, diagnosis(o)).toBe(false);
      expectTextCallNeverRun(o, diagnosis(o));
    });
  });
}
