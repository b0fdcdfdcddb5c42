/**
 * The person in `npm start`'s loop: the demo's `onHumanRequest`. By default it approves every
 * request and prints what it approved; with `--interactive` on a terminal it asks y/n instead.
 */
import { createInterface } from "node:readline/promises";
import type { HumanDecision, HumanRequest } from "../loop/human.js";

export interface DemoApproverOptions {
  /** Ask on `input` (a terminal) instead of approving by itself. */
  interactive: boolean;
  /** Prints one line (the demo's own printer, so `--quiet` silences it). */
  say: (line: string) => void;
  /** Labels the line, e.g. a coloured "human  ". */
  label: string;
  input?: NodeJS.ReadableStream;
  output?: NodeJS.WritableStream;
}

export const AUTO_APPROVED_NOTE = '(demo auto-approves; see docs/runner.md "Human in the loop")';

/**
 * `{part_number: "PN-4471", quantity: 250}`: the call's arguments as a person reads them.
 *
 * @example
 * formatArgs({ to: "ops@acme.test", total: 85 }); // '{to: "ops@acme.test", total: 85}'
 */
export function formatArgs(args: Record<string, unknown>): string {
  return `{${Object.entries(args).map(([k, v]) => `${k}: ${JSON.stringify(v)}`).join(", ")}}`;
}

/**
 * @example
 * new WorkflowRunner({ ..., onHumanRequest: demoApprover({ interactive: false, say: console.log, label: "human  " }) });
 */
export function demoApprover(options: DemoApproverOptions): (request: HumanRequest) => Promise<HumanDecision> {
  const { interactive, say, label } = options;
  return async function approve(request) {
    const what = `${request.tool} ${formatArgs(request.args)}`;
    if (!interactive) {
      // The demo's workflow only asks for approvals; a question gets an honest non-answer.
      if (request.kind === "input") return { type: "answer", answer: "(nobody is at the terminal to answer)" };
      say(`  ${label} ${what} → approved ${AUTO_APPROVED_NOTE}`);
      return { type: "approve" };
    }
    const rl = createInterface({ input: options.input ?? process.stdin, output: options.output ?? process.stdout });
    try {
      if (request.kind === "input") {
        const answer = await rl.question(`  ${label} ${what}\n  answer: `);
        return { type: "answer", answer };
      }
      const yes = /^y(es)?$/i.test((await rl.question(`  ${label} ${what} — approve? [y/N] `)).trim());
      say(`  ${label} ${request.tool} → ${yes ? "approved" : "rejected"} (by you)`);
      return yes ? { type: "approve" } : { type: "reject", reason: "declined at the demo's prompt" };
    } finally {
      rl.close();
    }
  };
}
