/**
 * The command that continues a run, as the CLI prints it: with the run's launch record only the
 * flags it does not already say; without one (runs recorded before forge-ts kept it)
 * placeholders for what must be filled in.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { cliCommand } from "../../src/cli-kit/cli-command.js";
import { recordedFlag, resumeCommand } from "../../src/cli-kit/resume-command.js";
import type { RunLaunch } from "../../src/persistence/run-store.js";

const CLI = cliCommand();
const launch: RunLaunch = { module: path.resolve("wf.mjs"), backend: "ollama", model: "qwen3:8b", baseUrl: "http://gpu:11434", think: false };

describe("resumeCommand", () => {
  it("with a launch record: the store only, and no flag the record already says", () => {
    expect(resumeCommand("r1", { launch, store: "s" })).toBe(`${CLI} runs resume r1 --store s`);
    expect(resumeCommand("r1", { launch, workflow: "./wf.mjs", backend: "ollama", model: "qwen3:8b", "base-url": "http://gpu:11434", think: "false" }, "retry")).toBe(`${CLI} runs retry r1`);
  });

  it("with a launch record: a flag given that differs from it is repeated", () => {
    expect(resumeCommand("r1", { launch, model: "qwen3:14b" })).toBe(`${CLI} runs resume r1 --model qwen3:14b`);
    expect(resumeCommand("r1", { launch, workflow: "other.mjs", "recommended-sampling": true })).toBe(`${CLI} runs resume r1 --workflow other.mjs --recommended-sampling`);
    // MCP servers are not recorded (a command line may hold a secret): repeated as given.
    expect(resumeCommand("r1", { launch, mcp: ["node fs.js /tmp"], "mcp-url": ["http://h/mcp"], "mcp-config": "m.json", store: "s" })).toBe(
      `${CLI} runs resume r1 --mcp 'node fs.js /tmp' --mcp-url http://h/mcp --mcp-config m.json --store s`,
    );
    // Another backend: the record's model and URL are not its, so the model must be given.
    expect(resumeCommand("r1", { launch, backend: "llamaserver" })).toBe(`${CLI} runs resume r1 --backend llamaserver --model <name>`);
  });

  it("without a record: the flags given, placeholders for the module, backend and model (none for sim's profile)", () => {
    expect(resumeCommand("r 1", { store: "my store" })).toBe(`${CLI} runs resume 'r 1' --workflow <module> --backend <name> --model <name> --store 'my store'`);
    expect(resumeCommand("r1", { workflow: "wf.mjs", backend: "sim" })).toBe(`${CLI} runs resume r1 --workflow wf.mjs --backend sim`);
  });
});

describe("recordedFlag", () => {
  it("the backend's settings only while the backend is the recorded one", () => {
    expect(recordedFlag(launch, "model", undefined)).toBe("qwen3:8b");
    expect(recordedFlag(launch, "model", "ollama")).toBe("qwen3:8b");
    expect(recordedFlag(launch, "model", "sim")).toBeUndefined();
    expect(recordedFlag(launch, "workflow", "sim")).toBe(launch.module);
    expect(recordedFlag(launch, "think", undefined)).toBe("false");
    expect(recordedFlag(launch, "mode", undefined)).toBeUndefined();
    expect(recordedFlag({ ...launch, recommendedSampling: true }, "recommended-sampling", undefined)).toBe("true");
    expect(recordedFlag(undefined, "backend", undefined)).toBeUndefined();
  });
});
