import { EventEmitter } from "node:events";
import { afterEach, describe, expect, it, vi } from "vitest";
import { proxyMain } from "../../src/cli/proxy.js";

afterEach(() => vi.restoreAllMocks());

/** proxyMain in-process until it listens, then a SIGINT; what it wrote to stderr. */
async function stderrOf(args: string[]): Promise<string[]> {
  const errors: string[] = [];
  vi.spyOn(console, "error").mockImplementation((line: unknown) => void errors.push(String(line)));
  vi.spyOn(console, "warn").mockImplementation(() => undefined);
  vi.spyOn(console, "log").mockImplementation(() => undefined);
  // Stop it as soon as it serves (waits for SIGINT).
  const signals = new EventEmitter().on("newListener", (name) => name === "SIGINT" && setImmediate(() => signals.emit("SIGINT")));
  // A backend nobody answers at: the proxy starts anyway (a warning), which is all this needs.
  const code = await proxyMain(["--backend", "ollama", "--model", "m", "--base-url", "http://127.0.0.1:9", "--port", "0", ...args], signals);
  expect(code).toBe(0);
  return errors;
}

describe("forge-ts proxy --host", () => {
  it("warns in one line when a non-loopback host has no --api-key", async () => {
    expect(await stderrOf(["--host", "0.0.0.0"])).toEqual([
      "forge-ts proxy: warning: --host 0.0.0.0 without --api-key: anyone who can reach this port can use the backend through the proxy",
    ]);
  }, 120_000);

  it("says nothing on loopback, or with --api-key", async () => {
    expect(await stderrOf([])).toEqual([]);
    expect(await stderrOf(["--host", "0.0.0.0", "--api-key", "k"])).toEqual([]);
  }, 120_000);
});
