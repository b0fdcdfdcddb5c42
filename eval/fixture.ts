/**
 * Fixtures: what a scenario family shares across its runs and must not start per run (an MCP
 * server and the files it serves). A fixture is reference-counted: a batch, each plan inside
 * it and each run hold it, the first holder opens it, the last one closes it, so a batch starts
 * it once however many runs use it, and a run started on its own still gets it and closes it.
 */
import { EvalFixtureError } from "../src/core/index.js";

/** What names a fixture (an EvalScenario): structural, so this file needs nothing of scenario.ts. */
export interface FixtureHolder {
  fixture?: EvalFixture<unknown>;
}

/** What `open` hands back: the value runs read, and how to let it go. */
export interface OpenedFixture<T> {
  value: T;
  close(): Promise<void>;
}

/**
 * @example
 * const server = new EvalFixture("fs", async () => { const s = await start(); return { value: s, close: () => s.close() }; });
 * await server.acquire(); try { use(server.value); } finally { await server.release(); }
 */
export class EvalFixture<T> {
  #holders = 0;
  #opening: Promise<OpenedFixture<T>> | undefined;
  #opened: OpenedFixture<T> | undefined;
  readonly #open: () => Promise<OpenedFixture<T>>;

  constructor(
    readonly name: string,
    open: () => Promise<OpenedFixture<T>>,
    /** Why it cannot open here (a package not installed), or undefined when it can. */
    readonly missing: () => string | undefined = () => undefined,
  ) {
    this.#open = open;
  }

  /** Holders right now (0: closed, or closing). */
  get holders(): number {
    return this.#holders;
  }

  /** The open value; a scenario's `build` reads it. */
  get value(): T {
    if (!this.#opened || this.#holders === 0) {
      throw new EvalFixtureError(this.name, "is not open: run its scenarios through runScenario, runEval or runBatch, or hold it with withFixtures");
    }
    return this.#opened.value;
  }

  /** Hold the fixture, opening it if nobody holds it; a failed opening is thrown to every waiting holder. */
  async acquire(): Promise<void> {
    this.#holders++;
    const opening = (this.#opening ??= this.#open().then((opened) => (this.#opened = opened)));
    try {
      await opening;
    } catch (error) {
      this.#holders--;
      // The next acquire tries again rather than rethrowing a stale failure forever.
      if (this.#opening === opening) this.#opening = undefined;
      throw error;
    }
  }

  /** Let go; the last holder closes it (and waits for the close). */
  async release(): Promise<void> {
    if (this.#holders === 0) throw new EvalFixtureError(this.name, "released more often than acquired");
    this.#holders--;
    if (this.#holders > 0) return;
    const opened = this.#opened;
    this.#opening = undefined;
    this.#opened = undefined;
    await opened?.close();
  }
}

/** The distinct fixtures of some scenarios, in first-use order. */
export function fixturesOf(scenarios: readonly FixtureHolder[]): EvalFixture<unknown>[] {
  return [...new Set(scenarios.flatMap((s) => (s.fixture ? [s.fixture] : [])))];
}

/**
 * Hold every fixture `scenarios` need while `fn` runs, and release them all however it ends.
 * Scenarios without fixtures cost nothing, so a selection without the mcp family starts no server.
 *
 * @example await withFixtures(scenarios, () => runEval({ scenarios, runs: 5, config }));
 */
export async function withFixtures<R>(scenarios: readonly FixtureHolder[], fn: () => Promise<R>): Promise<R> {
  const held: EvalFixture<unknown>[] = [];
  try {
    for (const fixture of fixturesOf(scenarios)) {
      await fixture.acquire();
      held.push(fixture);
    }
    return await fn();
  } finally {
    await releaseAll(held);
  }
}

/** Release each fixture even when an earlier one fails to close; then throw the first failure. */
export async function releaseAll(fixtures: readonly EvalFixture<unknown>[]): Promise<void> {
  const failures: unknown[] = [];
  for (const fixture of fixtures) {
    try {
      await fixture.release();
    } catch (error) {
      failures.push(error);
    }
  }
  if (failures.length > 0) throw failures[0];
}
