/**
 * Builds the visualizer page (visualizer/page/src/*.ts → visualizer/page/js/) once before the
 * tests, so the server and the Chromium tests load the page as `npm run build` ships it, and
 * nobody has to remember a build step (a transpile: about a third of a second).
 */
import { buildPage } from "../visualizer/page/build.js";

export default function setup(): void {
  buildPage();
}
