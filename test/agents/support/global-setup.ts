/**
 * vitest globalSetup: the agent tests need the pinned agents and a Node >= 22; a clean checkout
 * gets them installed here rather than the tests skipped (an existence check when present).
 */
import { ensureAgentsInstalled } from "./agent-install.js";

export default function setup(): void {
  ensureAgentsInstalled();
}
