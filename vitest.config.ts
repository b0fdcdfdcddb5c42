import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    setupFiles: ["test/setup.ts"],
    environment: "node",
    pool: "forks",
    // Two at a time: many files mostly wait on child processes and loopback servers, and on the
    // 2-core CI machine vitest would otherwise run one file at a time (cores - 1).
    maxWorkers: 2,
    testTimeout: 20_000,
    hookTimeout: 20_000,
    reporters: ["default"],
  },
});
