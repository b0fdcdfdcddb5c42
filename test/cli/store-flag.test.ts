/**
 * Every command reads `--store` through src/cli/store.ts: each is run in-process with openStore
 * replaced by a spy that stops the command there, and must hand it the flag's value as given
 * (so `file:runs.db` is a libSQL store for all of them, never a directory).
 */
import { afterEach, describe, expect, it, vi } from "vitest";

const opened = vi.hoisted(() => [] as string[]);
vi.mock("../../src/cli/store.js", async (importOriginal) => {
  const real = await importOriginal<typeof import("../../src/cli/store.js")>();
  return {
    ...real,
    openStore: async (spec: string) => {
      opened.push(spec);
      throw new Error("stop: the store was asked for");
    },
  };
});
// The worker checks Redis before it opens the store; none is needed to see which store it opens.
vi.mock("../../src/queue/redis.js", async (importOriginal) => ({ ...(await importOriginal<typeof import("../../src/queue/redis.js")>()), assertRedisReachable: async () => undefined }));

const { demoMain } = await import("../../src/cli/demo.js");
const { runMain, runsMain } = await import("../../src/cli/runs.js");
const { workerMain } = await import("../../src/cli/worker.js");
const { visualizeMain } = await import("../../src/cli/visualize.js");
const { mcpMain } = await import("../../src/cli/mcp.js");
const { storeSpec } = await import("../../src/cli/store.js");

const MODULE = "src/cli/demo-module.ts"; // exports a Workflow and the Oracle sim plays
const SPEC = "file:runs-flag-test.db";
const sim = ["--backend", "sim"];
const COMMANDS: [string, (store: string[]) => Promise<unknown>][] = [
  ["demo", (s) => demoMain(["--quiet", ...s])],
  ["run", (s) => runMain([MODULE, "hello", ...sim, ...s])],
  ["runs list", (s) => runsMain(["list", ...s])],
  ["runs show", (s) => runsMain(["show", "r1", ...s])],
  ["runs resume", (s) => runsMain(["resume", "r1", "--workflow", MODULE, ...sim, ...s])],
  ["worker", (s) => workerMain(["--redis", "redis://127.0.0.1:1", "--workflow", MODULE, ...sim, ...s])],
  ["visualize", (s) => visualizeMain([...s], process)],
  ["mcp", (s) => mcpMain(["--http", "--workflow", MODULE, ...sim, ...s], "test")],
];

afterEach(() => {
  opened.length = 0;
  vi.unstubAllEnvs();
});

describe("--store: one reader for every command", () => {
  it.each(COMMANDS)("%s hands --store file:… to openStore as given", async (_name, main) => {
    await expect(main(["--store", SPEC])).rejects.toThrow("stop: the store was asked for");
    expect(opened).toEqual([SPEC]);
  });

  it.each(COMMANDS.filter(([name]) => name !== "demo"))("%s falls back to FORGE_STORE, then ./.forge", async (_name, main) => {
    vi.stubEnv("FORGE_STORE", "postgres://db.example/runs");
    await expect(main([])).rejects.toThrow("stop");
    vi.stubEnv("FORGE_STORE", "");
    await expect(main([])).rejects.toThrow("stop");
    expect(opened).toEqual(["postgres://db.example/runs", ".forge"]);
  });

  it("demo records only when a store is named (flag or FORGE_STORE)", async () => {
    vi.stubEnv("FORGE_STORE", "file:env.db");
    await expect(demoMain(["--quiet"])).rejects.toThrow("stop");
    expect(opened).toEqual(["file:env.db"]);
  });

  it("takes the flag, else FORGE_STORE, else the fallback", () => {
    vi.stubEnv("FORGE_STORE", "");
    expect(storeSpec(undefined)).toBeUndefined();
    expect(storeSpec(undefined, ".forge")).toBe(".forge");
    expect(storeSpec("x", ".forge")).toBe("x");
  });
});
