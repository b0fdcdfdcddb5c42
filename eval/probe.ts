/**
 * `--probe`: what context budget a backend resolves to, without running anything. The
 * backend's own report (Ollama num_ctx, llama-server /props n_ctx) plus, for Ollama, the
 * FORGE_FULL / FORGE_FAST budgets from the detected GPU.
 */
import type { LLMClient } from "../src/core/index.js";
import type { BackendName } from "./backends.js";
import type { EvalScenario } from "./scenario.js";

/** @example (await probeLines("llamaserver", client, ALL_SCENARIOS)).join("\n") */
export async function probeLines(backend: BackendName, model: string, client: LLMClient, scenarios: readonly EvalScenario[]): Promise<string[]> {
  const reported = await client.getContextLength();
  const lines = [`backend ${backend} model ${model}: context length ${reported === undefined ? "not reported by the backend" : `${reported} tokens`}`];
  if (backend === "ollama") {
    const { detectHardware } = await import("../src/context/hardware.js");
    const { resolveOllamaBudget } = await import("../src/server/budget.js");
    const hw = await detectHardware();
    lines.push(
      hw
        ? `GPU ${hw.gpuName} (${hw.vramTotalGb.toFixed(1)} GB): forge-full ${resolveOllamaBudget("forge-full", hw)} tokens, forge-fast ${resolveOllamaBudget("forge-fast", hw)} tokens`
        : `no NVIDIA GPU detected: budget mode "backend" gives Ollama's default ${resolveOllamaBudget("backend", undefined)} tokens; forge-full/fast need VRAM`,
    );
  }
  const budgets = scenarios.map((s) => s.budgetTokens);
  lines.push(`scenario budgets: ${Math.min(...budgets)}..${Math.max(...budgets)} tokens (each scenario's own ContextManager budget)`);
  if (reported !== undefined && Math.max(...budgets) > reported) lines.push(`warning: some scenario budgets exceed the backend's ${reported}-token window`);
  return lines;
}
