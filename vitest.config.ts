import { readdirSync } from "node:fs";
import { defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";

// AI SDK 7 (`ai-v7`, `@ai-sdk/*-v3/v4`, installed in .ci/ai-sdk7 by a Node >= 22) needs Node >= 22
// to run: its tests are named `*.node22.test.ts` and are left out on older Node, with one line
// saying which and why (CI runs them on its Node 24 pass; docs/ai-sdk.md). Never skipped silently.
const NODE22_TESTS = "test/**/*.node22.test.ts";
/**
 * Says a line once per vitest run: the config is evaluated again for each project and in each
 * worker, which inherit the marker through the environment.
 */
function noteOnce(key: string, line: string): void {
  const marker = `FORGE_VITEST_NOTED_${key}`;
  if (process.env[marker] === "1") return;
  process.env[marker] = "1";
  console.warn(line);
}
const nodeMajor = Number(process.versions.node.split(".")[0]);
const node22Excluded = nodeMajor < 22 ? [NODE22_TESTS] : [];
if (node22Excluded.length > 0) {
  const files = readdirSync("test", { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".node22.test.ts"))
    .map((f) => `test/${f}`)
    .sort();
  noteOnce("NODE22", `[forge-ts] Node ${process.versions.node} < 22: not collecting ${files.length} AI SDK 7 test file(s) that need Node >= 22: ${files.join(", ")}`);
}

/**
 * The tiers (README "Tests"). `contract` (and `contract-isolated`) is `npm test`: every behaviour the README promises, in
 * a few minutes. `faults` is `npm run test:faults`: the long harnesses that break things on
 * purpose — kill -9 and SIGSTOP loops, the chaos run, Redis restarted under a batch — the
 * real-Chromium tests, and the packed package installed into an empty project. `agents` is `npm run test:agents`: the pinned coding-agent CLIs through
 * the proxy (Node >= 22; installs them when missing). CI runs all three, none skipped.
 */
const FAULTS = [
  "test/queue/chaos.test.ts",
  "test/queue/partitions.test.ts",
  "test/queue/distributed.test.ts",
  "test/persistence/kill9.test.ts",
  "test/persistence/paused-holder.test.ts",
  "test/proxy/fleet/kill-mid-load.test.ts",
  "test/visualizer/*browser.test.ts",
  "test/proxy/*browser.test.ts",
  // npm pack, then npm install of the tarball into an empty project: a minute or two, mostly I/O.
  "test/package/core-install.test.ts",
];
const AGENTS = ["test/agents/**/*.test.ts"];
// Files that replace modules with vi.mock: a module another file already loaded in a shared
// worker would not be replaced, so these run isolated (the `contract-isolated` half of the tier).
const MOCKING = ["test/cli/store-flag.test.ts"];
// Files that give one answer on every Node line: CI runs them on its first line and sets
// FORGE_NODE_LINE_ONLY=1 for the second. The docs' checks (tsc on the docs' code blocks, the CLI
// reference, links), and the property and path-coverage files: thousands of generated runs
// through the machine, in one process on in-memory stores and scripted models, CPU-bound pure
// computation (the Node 24 pass's single biggest contract cost); the example tests drive the
// same runner, stores and clients on Node 24 through real sockets, files and processes.
const NODE_LINE_FREE = ["test/docs/**", "test/**/*.property.test.ts", "test/**/*.paths.test.ts"];
const nodeLineOnly = process.env.FORGE_NODE_LINE_ONLY === "1";
if (nodeLineOnly) noteOnce("NODE_LINE_ONLY", `[forge-ts] FORGE_NODE_LINE_ONLY=1: not collecting ${NODE_LINE_FREE.join(", ")} (they do not depend on the Node line; CI ran them on Node 20)`);
const IGNORED = ["**/node_modules/**", ...node22Excluded, ...(nodeLineOnly ? NODE_LINE_FREE : [])];
// Builds the visualizer page (visualizer/page/src → js/) that the server serves.
const PAGE_SETUP = "test/global-setup.ts";

/**
 * Long files start first, so the end of a run is short files packed on every core rather than
 * one long file with the other cores idle: the faults and agents tiers (minutes each, much of it
 * waiting on processes), then the CPU-bound property and path-coverage files, then the rest in
 * vitest's own order (its duration cache, else larger files first). Vitest's order alone puts
 * projects by name and, on a clean clone, a 6-line agent file after every big one.
 */
class LongFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (f: TestSpecification) => (f.project.name === "faults" || f.project.name === "agents" ? 0 : /\.(property|paths)\.test\.ts$/.test(f.moduleId) ? 1 : 2);
    const sorted = await super.sort(files);
    return sorted.map((f, i) => ({ f, i, r: rank(f) })).sort((a, b) => a.r - b.r || a.i - b.i).map(({ f }) => f);
  }
}

export default defineConfig({
  // tsconfig.json `paths`: AI SDK 7 (ai-v7, @ai-sdk/*-v3/v4) lives in .ci/ai-sdk7 (.ci/ai-sdk7.ts),
  // not node_modules. Each name maps to its file without extension, which vite (and tsx) complete
  // to the .js, then to its .d.ts, which tsc takes (ESM resolution adds no extension).
  resolve: { tsconfigPaths: true },
  test: {
    setupFiles: ["test/setup.ts"],
    environment: "node",
    pool: "forks",
    // Files run on both cores: no test may need an idle machine (it waits on events, not time).
    maxWorkers: Number(process.env.FORGE_TEST_WORKERS ?? 3),
    // Deadlines catch hangs; they are not speed tests. 120 s holds on a 2-core machine running a
    // second suite beside this one (the ten-run load check); tests that spawn one CLI process
    // after another give themselves 300 s (a spawn takes seconds on such a machine).
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // expect.poll waits on a condition; its 1 s default is a wall-clock bet a loaded machine loses.
    expect: { poll: { timeout: 30_000 } },
    reporters: ["default"],
    sequence: { sequencer: LongFilesFirst },
    projects: [
      // Files share their worker's modules (isolate: false): re-importing the sources for each of
      // ~250 files was half the tier's CPU. A file restores what it changes (test/setup.ts backs it up).
      { extends: true, test: { name: "contract", include: ["test/**/*.test.ts"], exclude: [...IGNORED, ...FAULTS, ...AGENTS, ...MOCKING], globalSetup: [PAGE_SETUP], isolate: false } },
      { extends: true, test: { name: "contract-isolated", include: MOCKING, exclude: IGNORED, globalSetup: [PAGE_SETUP] } },
      { extends: true, test: { name: "faults", include: FAULTS, exclude: IGNORED, globalSetup: [PAGE_SETUP] } },
      // Installs the pinned coding agents when they are missing (never skipped).
      { extends: true, test: { name: "agents", include: AGENTS, exclude: IGNORED, globalSetup: ["test/agents/support/global-setup.ts"] } },
    ],
  },
});
