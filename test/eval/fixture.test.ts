/**
 * EvalFixture: opened by the first holder, closed by the last, shared by nested holders; a
 * failed opening is retried by the next acquire; misuse is a typed error.
 */
import { describe, expect, it } from "vitest";
import { EvalFixture, releaseAll, withFixtures } from "../../eval/fixture.js";
import type { EvalScenario } from "../../eval/scenario.js";
import { EvalFixtureError } from "../../src/core/index.js";

function counted(fail = 0) {
  const log: string[] = [];
  let n = 0;
  const fixture = new EvalFixture("counted", async () => {
    n++;
    log.push(`open ${n}`);
    if (n <= fail) throw new Error(`open ${n} failed`);
    const id = n;
    return { value: id, close: async () => void log.push(`close ${id}`) };
  });
  return { fixture, log };
}

const using = (fixture: EvalFixture<unknown>) => ({ name: "s", fixture }) as unknown as EvalScenario;

describe("EvalFixture", () => {
  it("opens once for nested and concurrent holders and closes when the last lets go", async () => {
    const { fixture, log } = counted();
    expect(() => fixture.value).toThrow(EvalFixtureError);
    await withFixtures([using(fixture), using(fixture)], async () => {
      await Promise.all([fixture.acquire(), fixture.acquire()]);
      expect(fixture.holders).toBe(3);
      await fixture.release();
      await fixture.release();
      expect(fixture.value).toBe(1);
    });
    expect(log).toEqual(["open 1", "close 1"]);
    expect(fixture.holders).toBe(0);
    expect(() => fixture.value).toThrow(/is not open/);
    await expect(fixture.release()).rejects.toThrow(EvalFixtureError);
  });

  it("a failed opening reaches every waiting holder, and the next acquire opens again", async () => {
    const { fixture, log } = counted(1);
    const results = await Promise.allSettled([fixture.acquire(), fixture.acquire()]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    expect(fixture.holders).toBe(0);
    await fixture.acquire();
    expect(fixture.value).toBe(2);
    await fixture.release();
    expect(log).toEqual(["open 1", "open 2", "close 2"]);
  });

  it("withFixtures releases when the body throws; releaseAll closes every fixture before throwing the first close failure", async () => {
    const { fixture, log } = counted();
    await expect(withFixtures([using(fixture)], async () => Promise.reject(new Error("body")))).rejects.toThrow("body");
    expect(log).toEqual(["open 1", "close 1"]);

    const bad = new EvalFixture("bad", async () => ({ value: 0, close: () => Promise.reject(new Error("close failed")) }));
    const good = counted();
    await bad.acquire();
    await good.fixture.acquire();
    await expect(releaseAll([bad, good.fixture])).rejects.toThrow("close failed");
    expect(good.log).toEqual(["open 1", "close 1"]);
  });
});

describe("selecting all scenarios when a fixture cannot open here", () => {
  it("leaves its scenarios out and says which and why; asked for by tag or name they stay", async () => {
    const { selectScenarios, ALL_SCENARIOS } = await import("../../eval/scenarios/index.js");
    const { EvalFixture } = await import("../../eval/fixture.js");
    const absent = new EvalFixture("absent-server", async () => ({ value: 1, close: async () => {} }), () => "not installed: some-server");
    const [a, b, c] = ALL_SCENARIOS;
    const needy = { ...b!, name: "needs_absent", tags: ["absent"], fixture: absent };
    const from = [a!, needy, c!];
    const notes: string[] = [];
    expect(selectScenarios({}, from, (n) => notes.push(n)).map((s) => s.name)).toEqual([a!.name, c!.name]);
    expect(notes).toEqual(["left out 1 scenario(s) that need absent-server (not installed: some-server): needs_absent"]);
    expect(selectScenarios({ tags: ["absent"] }, from, (n) => notes.push(n)).map((s) => s.name)).toEqual(["needs_absent"]);
    expect(selectScenarios({ names: ["needs_absent"] }, from, (n) => notes.push(n)).map((s) => s.name)).toEqual(["needs_absent"]);
    expect(notes).toHaveLength(1);
  });

  it("the mcp family is selected by default here, where its packages are installed", async () => {
    const { selectScenarios } = await import("../../eval/scenarios/index.js");
    const notes: string[] = [];
    expect(selectScenarios({}, undefined, (n) => notes.push(n)).some((s) => s.tags.includes("mcp"))).toBe(true);
    expect(notes).toEqual([]);
  });
});
