import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { demoApprover, formatArgs } from "../../src/cli/demo-approver.js";
import type { HumanRequest } from "../../src/loop/human.js";

const request = (over: Partial<HumanRequest> = {}): HumanRequest => ({
  callId: "c1", index: 0, tool: "submit_quote", args: { part_number: "PN-4471", quantity: 250 }, kind: "approval", askedAt: 0, parameters: {}, ...over,
});

/** An approver reading `typed` from a fake terminal; the lines it prints and the prompt it wrote. */
function atTerminal(typed: string) {
  const input = new PassThrough();
  const output = new PassThrough();
  let prompt = "";
  output.on("data", (d: Buffer) => (prompt += d.toString()));
  const lines: string[] = [];
  const approve = demoApprover({ interactive: true, say: (l) => lines.push(l), label: "human  ", input, output });
  setImmediate(() => input.write(typed));
  return { approve, lines, prompt: () => prompt };
}

describe("the demo's approver", () => {
  it("approves by itself and prints what it approved", async () => {
    const lines: string[] = [];
    const approve = demoApprover({ interactive: false, say: (l) => lines.push(l), label: "human  " });
    await expect(approve(request())).resolves.toEqual({ type: "approve" });
    expect(lines).toEqual(['  human   submit_quote {part_number: "PN-4471", quantity: 250} → approved (demo auto-approves; see docs/runner.md "Human in the loop")']);
  });

  it("asks y/n on a terminal: y approves, anything else rejects with a reason", async () => {
    const yes = atTerminal("y\n");
    await expect(yes.approve(request())).resolves.toEqual({ type: "approve" });
    expect(yes.prompt()).toContain('submit_quote {part_number: "PN-4471", quantity: 250} — approve? [y/N] ');
    expect(yes.lines).toEqual(["  human   submit_quote → approved (by you)"]);
    const no = atTerminal("\n");
    await expect(no.approve(request())).resolves.toEqual({ type: "reject", reason: "declined at the demo's prompt" });
    expect(no.lines).toEqual(["  human   submit_quote → rejected (by you)"]);
  });

  it("answers a question with what was typed, or unattended with a non-answer", async () => {
    const typed = atTerminal("ORD-7\n");
    await expect(typed.approve(request({ kind: "input", tool: "ask_user" }))).resolves.toEqual({ type: "answer", answer: "ORD-7" });
    const unattended = demoApprover({ interactive: false, say: () => undefined, label: "" });
    await expect(unattended(request({ kind: "input" }))).resolves.toMatchObject({ type: "answer" });
  });

  it("formats arguments the way a person reads them", () => {
    expect(formatArgs({ to: "ops@acme.test", total: 85, lines: [1] })).toBe('{to: "ops@acme.test", total: 85, lines: [1]}');
  });
});
