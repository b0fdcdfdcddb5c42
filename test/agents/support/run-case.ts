/**
 * Runs a batch of agent cases in a network namespace with only loopback (`unshare --net`: the
 * agents, the proxies and the scripted models reach each other and nothing else) and hands each
 * case's outcome over as soon as the case runner prints it.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { agentNode } from "./agent-install.js";
import { batchSpecSchema, CASE_RESULT_PREFIX, caseKey, type CaseOutcome, type CaseSpec } from "./case-spec.js";

const ROOT = path.resolve(import.meta.dirname, "../../..");
const RUNNER = "test/agents/support/case-runner.ts";

type CaseInput = Omit<CaseSpec, "timeoutMs"> & { timeoutMs?: number };

/**
 * Starts the batch; the map holds one promise per case (by `caseKey`).
 *
 * @example
 * const outcomes = runCases([{ agent: "pi", case: "hermes", mode: "proxy" }], 2);
 * (await outcomes.get("pi/hermes/proxy")!).file; // "forge"
 */
export function runCases(cases: readonly CaseInput[], concurrency: number): Map<string, Promise<CaseOutcome>> {
  const batch = batchSpecSchema.parse({ concurrency, cases });
  const pending = new Map<string, { resolve(o: CaseOutcome): void; reject(e: Error): void }>();
  const outcomes = new Map<string, Promise<CaseOutcome>>();
  for (const spec of batch.cases) {
    outcomes.set(caseKey(spec), new Promise((resolve, reject) => pending.set(caseKey(spec), { resolve, reject })));
    // Each test awaits its own; a batch that dies is reported by every test still waiting.
    outcomes.get(caseKey(spec))!.catch(() => undefined);
  }
  const script = 'ip link set lo up && exec "$0" --import tsx "$1" "$2"';
  const child = spawn("unshare", ["--net", "--", "sh", "-c", script, agentNode(), RUNNER, JSON.stringify(batch)], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  let buffered = "";
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr = (stderr + d.toString("utf8")).slice(-4000)));
  child.stdout.on("data", (d: Buffer) => {
    const lines = (buffered + d.toString("utf8")).split("\n");
    buffered = lines.pop()!;
    for (const line of lines.filter((l) => l.startsWith(CASE_RESULT_PREFIX))) {
      const outcome = JSON.parse(line.slice(CASE_RESULT_PREFIX.length)) as CaseOutcome;
      pending.get(caseKey(outcome))?.resolve(outcome);
      pending.delete(caseKey(outcome));
    }
  });
  child.on("close", (code) => {
    for (const [key, p] of pending) p.reject(new Error(`case runner exited ${code} before ${key} ended\n--- stderr\n${stderr}`));
  });
  return outcomes;
}
