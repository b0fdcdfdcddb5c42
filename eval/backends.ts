/**
 * Build the LLM client for an eval config: a fresh SimulatedClient per run (it plays that
 * run's scenario oracle) or one shared real client built by src/cli-kit/backends.ts.
 */
import { assertBackend, buildClient, type BackendOptions } from "../src/cli-kit/backends.js";
import { SimulatedClient } from "../src/clients/simulated.js";
import type { LLMClient } from "../src/core/index.js";
import type { EvalScenario, ScenarioInstance } from "./scenario.js";
import { evalFaultProfile } from "./sim-profile.js";
import { activeSlips, rememberingOracle, slippingOracle } from "./scenarios/oracle-kit.js";

export { BACKENDS, assertBackend, type BackendName, type BackendOptions } from "../src/cli-kit/backends.js";

/** Everything a client may need for one run (the simulator plays the scenario's oracle). */
export interface ClientRequest {
  scenario: EvalScenario;
  instance: ScenarioInstance;
  seed: number;
}

export type ClientFactory = (request: ClientRequest) => Promise<LLMClient>;

/**
 * A factory that makes a fresh SimulatedClient per run (it plays that run's scenario) or one
 * shared real client for every run.
 *
 * @example const make = clientFactory({ backend: "sim", model: "small-model" });
 */
export function clientFactory(options: BackendOptions): ClientFactory {
  assertBackend(options.backend);
  if (options.backend === "sim") {
    return async ({ scenario, instance, seed }) => {
      const oracle = slippingOracle(scenario.oracle, activeSlips(scenario.slips ?? [], options.model, seed));
      return new SimulatedClient({ oracle: rememberingOracle(oracle), workflow: instance.workflow, profile: evalFaultProfile(options.model, scenario.tags), seed, usage: true });
    };
  }
  let shared: LLMClient | undefined;
  return async () => (shared ??= buildClient(options));
}

