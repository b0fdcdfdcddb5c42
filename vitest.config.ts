import { readdirSync } from "node:fs";
import { defineConfig } from "vitest/config";

// AI SDK 7 (`ai-v7`, `@ai-sdk/*-v3/v4`) needs Node >= 22: its tests are named
// `*.node22.test.ts` and are left out on older Node, with one line saying which and why
// (run them with Node 24: docs/ai-sdk.md). Never skipped silently.
const NODE22_TESTS = "test/**/*.node22.test.ts";
const nodeMajor = Number(process.versions.node.split(".")[0]);
const exclude = nodeMajor < 22 ? [NODE22_TESTS] : [];
if (exclude.length > 0) {
  const files = readdirSync("test", { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".node22.test.ts"))
    .map((f) => `test/${f}`)
    .sort();
  console.warn(`[forge-ts] Node ${process.versions.node} < 22: not collecting ${files.length} AI SDK 7 test file(s) that need Node >= 22: ${files.join(", ")}`);
}

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    exclude: ["**/node_modules/**", ...exclude],
    setupFiles: ["test/setup.ts"],
    // Builds the visualizer page (visualizer/page/src → js/) that the server serves; installs
    // the pinned coding agents test/agents drives when they are missing (never skipped).
    globalSetup: ["test/global-setup.ts", "test/agents/support/global-setup.ts"],
    environment: "node",
    pool: "forks",
    testTimeout: 20_000,
    hookTimeout: 20_000,
    reporters: ["default"],
  },
});
