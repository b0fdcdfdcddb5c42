import { afterEach, describe, expect, it, vi } from "vitest";
import { backendOptionsFrom, buildClient } from "../../src/cli-kit/backends.js";

afterEach(() => vi.unstubAllEnvs());

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
