/**
 * The tiers' config keeps its own promises: every file that replaces modules (vi.mock) runs
 * isolated, since in the shared workers of the contract tier a module another file already
 * loaded would not be replaced, and the test would pass or fail by file order.
 */
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import config from "../vitest.config.js";

type Project = { test: { name: string; include?: string[]; isolate?: boolean } };

describe("vitest tiers", () => {
  it("every test file that calls vi.mock runs in an isolated project", () => {
    const projects = (config.test?.projects ?? []) as Project[];
    const isolated = projects.filter((p) => p.test.isolate !== false).flatMap((p) => p.test.include ?? []);
    const mocking = readdirSync("test", { recursive: true, encoding: "utf8" })
      .filter((f) => f.endsWith(".test.ts") && /\bvi\.(do)?[mM]ock\(/.test(readFileSync(`test/${f}`, "utf8")))
      .map((f) => `test/${f}`);
    expect(mocking.length).toBeGreaterThan(0);
    for (const file of mocking.filter((f) => f !== "test/test-tiers.test.ts")) expect(isolated, `${file} calls vi.mock`).toContain(file);
  });
});
