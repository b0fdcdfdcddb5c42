import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    setupFiles: ["test/setup.ts"],
    // Builds the visualizer page (visualizer/page/src → js/) that the server serves.
    globalSetup: ["test/global-setup.ts"],
    environment: "node",
    pool: "forks",
    testTimeout: 20_000,
    hookTimeout: 20_000,
    reporters: ["default"],
  },
});
