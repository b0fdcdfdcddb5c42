/**
 * Before the tests (and again before each rerun in watch mode, so a spawned CLI never runs an
 * older source than the tests import): installs AI SDK 7 in .ci/ai-sdk7 when it is missing
 * (.ci/ai-sdk7.ts); builds the visualizer page (visualizer/page/src/*.ts →
 * visualizer/page/js/), so the server and the Chromium tests load the page as `npm run build`
 * ships it, and nobody has to remember a build step (a transpile: about a third of a second);
 * then transpiles the sources spawned CLIs run to test-output/cli-js/<node major and hash>/
 * (support/cli-build.ts, about a second; none when that build exists), page included, and
 * tells the tests which folder (`inject("forgeCliBuild")`).
 */
import type { TestProject } from "vitest/node";
import { ensureAiSdk7 } from "../.ci/ai-sdk7.js";
import { buildPage } from "../visualizer/page/build.js";
import { buildCliSources } from "./support/cli-build.js";

async function build(): Promise<string> {
  // AI SDK 7 (.ci/ai-sdk7): the docs' checks compile against it, the *.node22 tests run it.
  ensureAiSdk7();
  buildPage();
  return buildCliSources();
}

// The contract and faults tiers both list this setup; one vitest run of both (CI's Node 24 pass)
// builds once, so one tier's setup never rewrites the build under the other's running tests.
const ONCE = Symbol.for("forge-ts.test-build");
type Built = { [ONCE]?: Promise<string> };

export default async function setup(project: TestProject): Promise<void> {
  project.provide("forgeCliBuild", await ((globalThis as Built)[ONCE] ??= build()));
  project.onTestsRerun(async () => project.provide("forgeCliBuild", await build()));
}
