import { afterEach, describe, expect, it, vi } from "vitest";
import { backendOptionsFrom, buildClient, runClients } from "../../src/cli-kit/backends.js";
import { supplierQuoteWorkflow } from "../../src/cli/demo-workflow.js";
import { loadWorkflowModule } from "../../src/cli/workflow-module.js";
import type { SimulatedClient } from "../../src/clients/simulated.js";
import { isUsageError } from "../../src/cli-kit/run-cli.js";

afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

describe("the anthropic backend without a key", () => {
  it("says there is no API key and which flag or variable gives one (not that it is unreachable)", () => {
    vi.stubEnv("ANTHROPIC_API_KEY", "");
    expect(() => buildClient(backendOptionsFrom("anthropic", { model: "claude-x" }))).toThrow(
      "Invalid --api-key: no API key for the anthropic backend: give --api-key <key> or set ANTHROPIC_API_KEY",
    );
    expect(() => buildClient(backendOptionsFrom("anthropic", { model: "claude-x", apiKeyFlag: "--backend-api-key" }))).toThrow("give --backend-api-key <key>");
    // The eval harness has no key flag: only the variable is named.
    expect(() => buildClient({ backend: "anthropic", model: "claude-x" })).toThrow("no API key for the anthropic backend: set ANTHROPIC_API_KEY");
  });

  it("builds with a key, the variable, a custom base URL, or keys that callers bring", () => {
    vi.stubEnv("ANTHROPIC_API_KEY", "");
    expect(buildClient({ backend: "anthropic", model: "m", apiKey: "k" })).toBeDefined();
    expect(buildClient({ backend: "anthropic", model: "m", baseUrl: "http://127.0.0.1:1" })).toBeDefined();
    expect(buildClient({ backend: "anthropic", model: "m", keyFromCaller: true })).toBeDefined();
    vi.stubEnv("ANTHROPIC_API_KEY", "from-env");
    expect(buildClient({ backend: "anthropic", model: "m" })).toBeDefined();
  });
});

describe("the simulated backend's oracle", () => {
  const SCHEMA_LINE = /^forge-ts: (.+) exports no oracle; the simulated model plays a schema-driven one \(required steps in order, arguments from each tool's schema, then the terminal tool\)$/;

  it("plays the module's own oracle and says nothing", async () => {
    const stderr = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const { workflow, oracle, userInput } = supplierQuoteWorkflow();
    const { clientFor } = await runClients("sim", {}, [{ workflow, oracle, module: "demo.ts" }]);
    const client = clientFor(workflow) as SimulatedClient;
    await client.send([{ role: "user", content: userInput }], workflow.getToolSpecs());
    expect(client.log[0]!.step).toEqual({ tool: "lookup_part", args: { part_number: "PN-4471" } });
    expect(stderr).not.toHaveBeenCalled();
  });

  it("without one, plays the schema-driven oracle and says so in one line per module", async () => {
    const stderr = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const { workflow } = supplierQuoteWorkflow();
    const { clientFor } = await runClients("sim", { model: "clean" }, [{ workflow, module: "./quote.mjs" }]);
    expect(stderr).toHaveBeenCalledTimes(1);
    expect(String(stderr.mock.calls[0]![0])).toMatch(SCHEMA_LINE);
    expect(String(stderr.mock.calls[0]![0])).toContain("forge-ts: ./quote.mjs exports no oracle");
    const client = clientFor(workflow) as SimulatedClient;
    await client.send([{ role: "user", content: "go" }], workflow.getToolSpecs());
    expect(client.log[0]!.step).toEqual({ tool: "lookup_part", args: { part_number: "part_number" } });
    clientFor(workflow);
    expect(stderr).toHaveBeenCalledTimes(1); // decided once, not per run
  });

  it("refuses, as a usage error naming the tool and keyword, a module whose schemas it cannot play", async () => {
    const module = await loadWorkflowModule("test/fixtures/schema-gap-workflow.ts");
    const error = await runClients("sim", {}, [module]).then(
      () => expect.fail("should have refused"),
      (e: unknown) => e,
    );
    expect(isUsageError(error)).toBe(true);
    expect((error as Error).message).toBe(
      'Invalid --backend: sim cannot play test/fixtures/schema-gap-workflow.ts, which exports no oracle: Tool "pick": the schema-driven oracle cannot generate arguments (not at choice): not supported; export an Oracle named "oracle" from it',
    );
  });
});
