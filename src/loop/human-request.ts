/**
 * A person in the loop as plain JSON: the requests a batch raises and the decisions taken on
 * them. They live in the machine context and the store; the logic is in human.ts.
 */

export type HumanKind = "approval" | "input";

/** What a person decided about one request. */
export type HumanDecision =
  | { type: "approve"; args?: Record<string, unknown> }
  | { type: "reject"; reason: string }
  | { type: "answer"; answer: unknown };

/** One call waiting for a person (plain JSON: it lives in the machine context and the store). */
export interface HumanRequest {
  callId: string;
  index: number;
  tool: string;
  /** The arguments as the model gave them (validated). */
  args: Record<string, unknown>;
  kind: HumanKind;
  /** Wall clock when the run started waiting for it. */
  askedAt: number;
  /** The tool's parameters, so a decision with edited args can be checked without the workflow. */
  parameters: Record<string, unknown>;
  decision?: HumanDecision & { at: number };
}

export interface HumanDecisionEvent {
  type: "human.decide";
  callId: string;
  decision: HumanDecision;
  /** When the person decided (recorded with the decision). */
  at: number;
}
