/**
 * Once before the tests: builds the visualizer page (visualizer/page/src/*.ts →
 * visualizer/page/js/), so the server and the Chromium tests load the page as `npm run build`
 * ships it, and nobody has to remember a build step (a transpile: about a third of a second);
 * then transpiles the sources spawned CLIs run to test-output/cli-js/ (support/cli-build.ts,
 * about a second), page included.
 */
import { buildPage } from "../visualizer/page/build.js";
import { buildCliSources } from "./support/cli-build.js";

export default async function setup(): Promise<void> {
  buildPage();
  await buildCliSources();
}
