/**
 * What the test asks the case runner for, and what it gets back: one line on the runner's stdout,
 * `CASE-RESULT <json>`, so the agents' own output around it cannot be mistaken for it.
 */
import { z } from "zod";
import type { ProxyCounts } from "./case-proxy.js";
import type { ModelTurnRecord } from "./fake-ollama.js";
import { AGENTS } from "./agent-setup.js";
import { CASES } from "./turn-policy.js";

export const CASE_RESULT_PREFIX = "CASE-RESULT ";

export const caseSpecSchema = z.object({
  agent: z.enum(AGENTS),
  case: z.enum(CASES),
  /** `proxy`: the agent talks to forge-ts proxy in front of the model; `direct`: to the model. */
  mode: z.enum(["proxy", "direct"]),
  /** How long the agent may run before its process group is killed. */
  timeoutMs: z.number().int().positive().default(90_000),
});
export type CaseSpec = z.infer<typeof caseSpecSchema>;

/** One case runner process: its cases, run `concurrency` at a time. */
export const batchSpecSchema = z.object({ concurrency: z.number().int().positive(), cases: z.array(caseSpecSchema).min(1) });

/** A case's identity within a batch. */
export const caseKey = (c: Pick<CaseSpec, "agent" | "case" | "mode">): string => `${c.agent}/${c.case}/${c.mode}`;

export interface CaseOutcome extends CaseSpec {
  exitCode: number | null;
  timedOut: boolean;
  /** hello.txt's contents after the run, or null when the agent did not create it. */
  file: string | null;
  /** The chat requests the model answered, with its replies. */
  turns: ModelTurnRecord[];
  /** What the proxy did (mode `proxy`): calls rescued from text, retries after a nudge, failures. */
  proxy?: ProxyCounts;
  /** Every request the model server got (method and path). */
  requests: string[];
  /** The ends of the agent's stdout and stderr, for diagnosis. */
  stdout: string;
  stderr: string;
  ms: number;
}
