/**
 * A run's launch record: what `forge-ts run` records in the start event (module as an absolute
 * path, backend, model; never a credential), how `runs resume|retry|replay` read it back (a
 * fork's from its parent) and fill the flags not given, and what a run without one still needs.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ContextManager } from "../../src/context/context-manager.js";
import { SimulatedClient } from "../../src/clients/simulated.js";
import { InvalidArgumentError, StoreError } from "../../src/core/errors.js";
import { launchOf, recordedLaunch, withLaunch, type LaunchFlags } from "../../src/cli/run-launch.js";
import { runMain, runsMain } from "../../src/cli/runs.js";
import { FileRunStore } from "../../src/persistence/file-run-store.js";
import { MemoryRunStore } from "../../src/persistence/memory-run-store.js";
import type { RunLaunch } from "../../src/persistence/run-store.js";
import { WorkflowRunner } from "../../src/runner.js";
import { forkRun } from "../../src/runner/fork.js";
import { oracle, workflow } from "./fixtures/weather-workflow.js";
import { inProcess } from "../support/in-process-cli.js";
import { cliCommand } from "../../src/cli-kit/cli-command.js";

const MODULE = "test/cli/fixtures/weather-workflow.ts";
const storeDir = () => path.join(mkdtempSync(path.join(tmpdir(), "forge-launch-")), "store");
const runner = (store: FileRunStore | MemoryRunStore) =>
  new WorkflowRunner({ client: new SimulatedClient({ oracle, workflow, seed: 1 }), contextManager: new ContextManager({ budgetTokens: 8192 }), store });

describe("launchOf", () => {
  it("the module as an absolute path; for sim its profile only", () => {
    expect(launchOf("./wf.mjs", "sim", { baseUrl: "http://x", think: "true" })).toEqual({ module: path.resolve("wf.mjs"), backend: "sim", model: "clean" });
    expect(launchOf("wf.mjs", "sim", { model: "chaotic" }).model).toBe("chaotic");
    expect(() => launchOf("wf.mjs", "sim", { model: "nope" })).toThrow(/takes a fault profile as its model: clean, small-model, chaotic; got "nope"/);
  });

  it("a real backend's settings, its URL without user and password", () => {
    expect(launchOf("/w/wf.mjs", "openai", { model: "m", baseUrl: "http://me:secret@gpu:8000/v1", mode: "native", think: "false", recommendedSampling: true, apiKey: "k" })).toEqual({
      module: "/w/wf.mjs",
      backend: "openai",
      model: "m",
      baseUrl: "http://gpu:8000/v1",
      mode: "native",
      think: false,
      recommendedSampling: true,
    });
    expect(launchOf("/w/wf.mjs", "ollama", { model: "m", baseUrl: "http://gpu:11434" }).baseUrl).toBe("http://gpu:11434");
    // A token in the query is a credential too: the record keeps the rest of the query.
    expect(launchOf("/w/wf.mjs", "llamaserver", { model: "m", baseUrl: "http://gpu:8080/v1?token=t0ken&x=1" }).baseUrl).toBe("http://gpu:8080/v1?x=1");
  });
});

describe("withLaunch", () => {
  const launch: RunLaunch = { module: "/w/wf.mjs", backend: "ollama", model: "qwen3:8b", baseUrl: "http://gpu:11434", recommendedSampling: true };
  it("fills each flag not given from the record; a given flag wins", () => {
    const onlyStore: LaunchFlags & { store: string } = { store: "s" };
    expect(withLaunch(onlyStore, launch)).toEqual({ store: "s", workflow: "/w/wf.mjs", backend: "ollama", model: "qwen3:8b", "base-url": "http://gpu:11434", "recommended-sampling": true });
    expect(withLaunch({ model: "qwen3:14b", workflow: "x.mjs" }, launch)).toMatchObject({ workflow: "x.mjs", model: "qwen3:14b", "base-url": "http://gpu:11434" });
    expect(withLaunch(onlyStore, undefined)).toBe(onlyStore);
  });

  it("another backend takes none of the recorded backend's settings", () => {
    expect(withLaunch({ backend: "sim" }, launch)).toEqual({ backend: "sim", workflow: "/w/wf.mjs" });
  });
});

describe("the launch record in the store", () => {
  it("forge-ts run records it; runs replay and resume need no --workflow, --backend or --model", async () => {
    const store = storeDir();
    expect((await inProcess((a) => runMain(a), [MODULE, "Is it warm?", "--backend", "sim", "--store", store, "--run-id", "r1", "--var", "team=ops"])).code).toBe(0);
    const files = new FileRunStore({ dir: store });
    expect(await recordedLaunch(files, "r1")).toEqual({ module: path.resolve(MODULE), backend: "sim", model: "clean" });
    const replayed = await inProcess((a) => runsMain(a), ["replay", "r1", "--store", store]);
    expect(replayed).toMatchObject({ code: 0, stdout: expect.stringContaining('state done, result "Yes: 21 °C in Lisbon."') });
    const resumed = await inProcess((a) => runsMain(a), ["resume", "r1", "--store", store]);
    expect(resumed).toMatchObject({ code: 0, stdout: '"Yes: 21 °C in Lisbon."' });
  });

  it("a --run-id the store already has is refused before an id is printed, with the command that continues that run", async () => {
    const store = storeDir();
    const run = () => inProcess((a) => runMain(a), [MODULE, "Is it warm?", "--backend", "sim", "--store", store, "--run-id", "r1", "--var", "team=ops"]);
    expect((await run()).code).toBe(0);
    const again = await run();
    expect([again.code, again.stdout]).toEqual([2, ""]);
    expect(again.stderr).toBe(`forge-ts: Invalid --run-id: run r1 already exists in ${store}: continue it with ${cliCommand()} runs resume r1 --store ${store}, or choose another id [FORGE_INVALID_ARGUMENT]`);
  });

  it("a fork's record is its parent's", async () => {
    const store = new MemoryRunStore();
    const launch: RunLaunch = { module: "/w/wf.mjs", backend: "sim", model: "clean" };
    await runner(store).run(workflow, "Is it warm?", { runId: "p", promptVars: { team: "ops" }, launch });
    await forkRun(store, "p", { at: 1, runId: "f" });
    await forkRun(store, "f", { at: 1, runId: "ff" });
    expect(await recordedLaunch(store, "ff")).toEqual(launch);
  });

  it("a run without one (the library, or runs before forge-ts kept it) still needs --workflow: one line, exit 2", async () => {
    const dir = storeDir();
    await runner(new FileRunStore({ dir })).run(workflow, "Is it warm?", { runId: "old", promptVars: { team: "ops" } });
    expect(await recordedLaunch(new FileRunStore({ dir }), "old")).toBeUndefined();
    const refused = await inProcess((a) => runsMain(a), ["resume", "old", "--backend", "sim", "--store", dir]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe(
      "forge-ts: Invalid --workflow: resume needs the module that exports the run's workflow: run old records none (started before forge-ts recorded it, or not by forge-ts run) [FORGE_INVALID_ARGUMENT]",
    );
    expect(await inProcess((a) => runsMain(a), ["resume", "old", "--workflow", MODULE, "--backend", "sim", "--store", dir])).toMatchObject({ code: 0 });
  });

  it("a record the store holds in another shape is a StoreError naming the run", async () => {
    const dir = storeDir();
    await runner(new FileRunStore({ dir })).run(workflow, "Is it warm?", { runId: "bad", promptVars: { team: "ops" }, launch: { module: "/w/wf.mjs", backend: "sim", model: "clean" } });
    const log = path.join(dir, "runs", "bad", "log.jsonl");
    writeFileSync(log, readFileSync(log, "utf8").replace('"model":"clean"', '"model":7'));
    const error = await recordedLaunch(new FileRunStore({ dir }), "bad").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as StoreError).message).toMatch(/^run bad's start event holds a launch record forge-ts cannot read: Invalid launch: expected \{ module, backend, model/);
  });

  it("the runner refuses a launch that is not one (it is stored as given)", async () => {
    const start = (launch: unknown) => runner(new MemoryRunStore()).run(workflow, "hi", { promptVars: { team: "ops" }, launch: launch as RunLaunch });
    for (const bad of [{ module: "", backend: "sim", model: "clean" }, { module: "/w", backend: "sim" }, { module: "/w", backend: "sim", model: "clean", apiKey: "k" }, { module: "/w", backend: "sim", model: "clean", think: "yes" }, "sim"]) {
      await expect(start(bad)).rejects.toThrow(InvalidArgumentError);
    }
  });
});
