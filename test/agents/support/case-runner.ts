/**
 * Agent cases, run inside the network namespace the test made (only loopback exists there).
 * Each case gets its own scripted model, `forge-ts proxy` in front of it (mode `proxy`) or
 * nothing (mode `direct`), and the agent configured from its docs page, in a fresh working
 * directory and HOME, on random ports. Prints one line per case as it ends,
 * `CASE-RESULT <json>` (a CaseOutcome), and exits 0 whatever the agents did. One process runs
 * a whole batch (a few at a time): starting it costs more than most agent runs.
 *
 *   node --import tsx test/agents/support/case-runner.ts '{"concurrency":2,"cases":[{"agent":"pi","case":"hermes","mode":"proxy"}]}'
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { agentSetup } from "./agent-setup.js";
import { caseProxy, proxyCounts } from "./case-proxy.js";
import { batchSpecSchema, CASE_RESULT_PREFIX, type CaseOutcome, type CaseSpec } from "./case-spec.js";
import { startFakeOllama } from "./fake-ollama.js";
import { FILE_NAME } from "./turn-policy.js";

const ROOT = path.resolve(import.meta.dirname, "../../..");
const AGENT_BIN = path.join(ROOT, ".ci/agents/node_modules/.bin");
const tail = (text: string, n = 1500) => (text.length > n ? `…${text.slice(-n)}` : text);

interface AgentRun {
  exitCode: number | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
}

async function runAgent(command: string, cwd: string, env: Record<string, string>, timeoutMs: number): Promise<AgentRun> {
  // Its own process group, so a timeout ends the agent and everything it started.
  const child = spawn("sh", ["-c", command], { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString("utf8")));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    process.kill(-child.pid!, "SIGKILL");
  }, timeoutMs);
  const [code] = (await once(child, "close")) as [number | null];
  clearTimeout(timer);
  return { exitCode: code, timedOut, stdout, stderr };
}

async function runCase(spec: CaseSpec): Promise<CaseOutcome> {
  const started = performance.now();
  const root = mkdtempSync(path.join(tmpdir(), `forge-agent-${spec.agent}-`));
  const home = path.join(root, "home");
  const work = path.join(root, "work");
  mkdirSync(home);
  mkdirSync(work);
  const model = await startFakeOllama(spec.case, work);
  const proxy = spec.mode === "proxy" ? caseProxy(model.url) : undefined;
  try {
    const url = proxy ? (await proxy.listen({ port: 0, host: "127.0.0.1" })).url : model.url;
    const setup = agentSetup(spec.agent, url, ROOT);
    for (const f of setup.files) {
      const target = path.join(f.base === "home" ? home : work, f.path);
      mkdirSync(path.dirname(target), { recursive: true });
      writeFileSync(target, f.text);
    }
    // Only what the page sets, plus a PATH with the pinned agents and this Node (>= 22).
    const env = { PATH: `${AGENT_BIN}:${path.dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`, HOME: home, LANG: "C.UTF-8", TERM: "dumb", NO_COLOR: "1", ...setup.env };
    const run = await runAgent(setup.run, work, env, spec.timeoutMs);
    const file = path.join(work, FILE_NAME);
    return {
      ...spec,
      exitCode: run.exitCode,
      timedOut: run.timedOut,
      file: existsSync(file) ? readFileSync(file, "utf8") : null,
      turns: model.turns,
      ...(proxy ? { proxy: proxyCounts(proxy.stats()) } : {}),
      requests: model.paths(),
      stdout: tail(run.stdout),
      stderr: tail(run.stderr),
      ms: Math.round(performance.now() - started),
    };
  } finally {
    await proxy?.close();
    await model.close();
    rmSync(root, { recursive: true, force: true });
  }
}

const batch = batchSpecSchema.parse(JSON.parse(process.argv[2] ?? "{}"));
const queue = [...batch.cases];
async function worker(): Promise<void> {
  for (let spec = queue.shift(); spec !== undefined; spec = queue.shift()) {
    process.stdout.write(`${CASE_RESULT_PREFIX}${JSON.stringify(await runCase(spec))}\n`);
  }
}
await Promise.all(Array.from({ length: batch.concurrency }, worker));
