/** The eval harness's own errors. */
import { ForgeError } from "./forge-error.js";

/**
 * An eval fixture (a resource a scenario family shares across runs, such as an MCP server) was
 * used while not open, or released more often than acquired: a harness bug, never model data.
 */
export class EvalFixtureError extends ForgeError {
  override readonly code = "FORGE_EVAL_FIXTURE";
  constructor(
    readonly fixture: string,
    message: string,
  ) {
    super(`eval fixture "${fixture}": ${message}`);
  }
  override get data() {
    return { fixture: this.fixture };
  }
}
