/** Which cases an agent runs: all by default (the lift table), CI's share with FORGE_AGENT_CASES=ci. */
import { describe, expect, it } from "vitest";
import { AGENTS } from "./support/agent-setup.js";
import { agentCases, CASES, TEXT_CASES } from "./support/turn-policy.js";

describe("agentCases", () => {
  it("runs every case through the proxy and every text case directly with all (the default when FORGE_AGENT_CASES is unset)", () => {
    expect(agentCases("pi", AGENTS, "all")).toEqual({ proxy: CASES, direct: TEXT_CASES });
  });

  it("in CI, gives each agent the native and retry cases and one text format both ways, every format run by some agent", () => {
    const chosen = AGENTS.map((agent) => agentCases(agent, AGENTS, "ci"));
    for (const { proxy, direct } of chosen) {
      expect(proxy).toEqual(expect.arrayContaining(["native", "misspelled", "bad-args"]));
      expect(proxy).toHaveLength(4);
      expect(direct).toHaveLength(1);
      expect(proxy).toContain(direct[0]);
    }
    expect(new Set(chosen.map((c) => c.direct[0]))).toEqual(new Set(TEXT_CASES));
  });

  it("refuses an unknown selection or agent, naming what it takes", () => {
    expect(() => agentCases("pi", AGENTS, "some")).toThrow('FORGE_AGENT_CASES=some: give "all" (the default) or "ci"');
    expect(() => agentCases("aider", AGENTS, "ci")).toThrow("aider is not one of claude-code, codex, opencode, qwen-code, pi");
  });
});
