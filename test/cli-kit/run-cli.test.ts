/** The one line a command prints for an error: the message first, then the code to search for. */
import { parseArgs } from "node:util";
import { describe, expect, it } from "vitest";
import { errorLine, errorText, exitCodeOf } from "../../src/cli-kit/run-cli.js";
import { InvalidArgumentError, StoreError } from "../../src/core/errors.js";

describe("errorLine", () => {
  it("leads with the message; a ForgeError's code follows in brackets", () => {
    expect(errorLine(new InvalidArgumentError("--port", "expected 0..65535"))).toBe("forge-ts: Invalid --port: expected 0..65535 [FORGE_INVALID_ARGUMENT]");
    expect(errorLine(new StoreError("disk full", "r1", "/tmp/x"))).toBe("forge-ts: disk full [FORGE_STORE]");
    expect(errorText(new StoreError("disk full", "r1", "/tmp/x"))).toBe("disk full [FORGE_STORE]");
  });

  it("a flag parseArgs refuses points at --help; another error names its class unless it is a plain Error", () => {
    let refused: unknown;
    try {
      parseArgs({ args: ["--frobnicate"], options: {}, strict: true });
    } catch (error) {
      refused = error;
    }
    expect(errorLine(refused)).toBe("forge-ts: Unknown option '--frobnicate' (see --help)");
    expect(errorLine(new TypeError("x is not a function"))).toBe("forge-ts: x is not a function [TypeError]");
    expect(errorLine(new Error("plain"))).toBe("forge-ts: plain");
    expect(errorLine("a thrown string")).toBe("forge-ts: a thrown string");
  });

  it("exitCodeOf: 2 for a usage error, 1 for another", async () => {
    const fail = (error: unknown) => () => {
      throw error;
    };
    expect(await exitCodeOf(fail(new InvalidArgumentError("x", "y")), [])).toBe(2);
    expect(await exitCodeOf(fail(new StoreError("s", undefined, "l")), [])).toBe(1);
  });
});
