import { afterEach, describe, expect, it, vi } from "vitest";
import { backendKeyFromEnv, backendOptionsFrom, buildClient, runClients, unreachable, type BackendName } from "../../src/cli-kit/backends.js";
import { probeBackend } from "../../src/proxy/fleet/backend-health.js";
import { useKeyedServers, type KeyedKind } from "../clients/support/keyed-server.js";
import { MESSAGES } from "../clients/contract.js";
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

describe("every backend takes its key", () => {
  const serve = useKeyedServers();
  const KINDS: [Exclude<BackendName, "sim" | "anthropic">, KeyedKind][] = [
    ["llamaserver", "llamaserver"],
    ["llamafile", "llamaserver"],
    ["openai", "vllm"],
    ["ollama", "ollama"],
  ];

  it.each(KINDS)("%s: the key reaches the chat, the model list and the health probe as a bearer token", async (backend, kind) => {
    const s = await serve(kind, ["k"]);
    const client = buildClient({ backend, model: "test-model", baseUrl: s.baseUrl, apiKey: "k", apiKeyFlag: "--backend-api-key" });
    expect(await unreachable(client, backend)).toBeUndefined();
    expect(await probeBackend(client, 2_000)).toBeUndefined();
    expect(await client.send(MESSAGES)).toMatchObject({ type: "text", content: "hello" });
    expect(s.requests).toHaveLength(3);
    expect(s.auths()).toEqual(["Bearer k", "Bearer k", "Bearer k"]);
  });

  it.each(KINDS)("%s: a wrong key is said as refused credentials, not as unreachable", async (backend, kind) => {
    const s = await serve(kind, ["k"]);
    const client = buildClient({ backend, model: "test-model", baseUrl: s.baseUrl, apiKey: "wrong" });
    expect(await unreachable(client, `${backend} at ${s.baseUrl}`)).toMatch(new RegExp(`^backend ${backend} at .+ refused the credentials \\(HTTP 401\\): `));
  });

  it("OPENAI_API_KEY goes to the openai backend only, ANTHROPIC_API_KEY to anthropic only; a flag wins", () => {
    const env = { OPENAI_API_KEY: "sk-openai", ANTHROPIC_API_KEY: "sk-ant" };
    expect(backendKeyFromEnv("openai", env)).toBe("sk-openai");
    expect(backendKeyFromEnv("anthropic", env)).toBe("sk-ant");
    for (const backend of ["llamaserver", "llamafile", "ollama", "sim"] as const) expect(backendKeyFromEnv(backend, env)).toBeUndefined();
    expect(backendKeyFromEnv("openai", { OPENAI_API_KEY: "" })).toBeUndefined();
    vi.stubEnv("OPENAI_API_KEY", "sk-openai");
    vi.stubEnv("ANTHROPIC_API_KEY", "sk-ant");
    expect(backendOptionsFrom("openai", { model: "m" }).apiKey).toBe("sk-openai");
    expect(backendOptionsFrom("anthropic", { model: "m" }).apiKey).toBe("sk-ant");
    for (const backend of ["llamaserver", "llamafile", "ollama"] as const) {
      expect(backendOptionsFrom(backend, { model: "m" }).apiKey).toBeUndefined();
      expect(backendOptionsFrom(backend, { model: "m", apiKey: "mine" }).apiKey).toBe("mine");
    }
  });

  it("an OpenAI key in the environment never reaches a local llama-server or Ollama", async () => {
    vi.stubEnv("OPENAI_API_KEY", "sk-openai");
    for (const [backend, kind] of [["llamaserver", "llamaserver"], ["ollama", "ollama"]] as const) {
      const s = await serve(kind, ["sk-openai"]);
      const client = buildClient(backendOptionsFrom(backend, { model: "test-model", baseUrl: s.baseUrl }));
      await expect(client.send(MESSAGES)).rejects.toMatchObject({ statusCode: 401 });
      expect(s.auths()).toEqual([undefined]);
    }
  });

  it("refuses a key for the simulated model, naming the command's flag", async () => {
    expect(() => backendOptionsFrom("sim", { model: "clean", apiKey: "k" })).toThrow(
      "Invalid --api-key: the simulated model (--backend sim) has no server to send a key to; leave the key out, or pick a real backend",
    );
    const { workflow, oracle } = supplierQuoteWorkflow();
    const error = await runClients("sim", { apiKey: "k", apiKeyFlag: "--backend-api-key" }, [{ workflow, oracle }]).then(
      () => expect.fail("should have refused"),
      (e: unknown) => e,
    );
    expect(isUsageError(error)).toBe(true);
    expect((error as Error).message).toMatch(/^Invalid --backend-api-key: the simulated model \(--backend sim\) has no server to send a key to/);
  });

  it("refuses a key with a line break or control character, or padded with spaces, naming the flag", () => {
    for (const key of ["k\r", "k\n", "a\u0000b", " k", "k "]) {
      for (const backend of ["llamaserver", "ollama", "openai", "anthropic"] as const) {
        expect(() => buildClient({ backend, model: "m", baseUrl: "http://127.0.0.1:1/v1", apiKey: key, apiKeyFlag: "--backend-api-key" })).toThrow(/^Invalid --backend-api-key: /);
      }
    }
    expect(() => buildClient({ backend: "ollama", model: "m", apiKey: "k\n" })).toThrow("Invalid apiKey: contains a line break or other control character");
  });
});
