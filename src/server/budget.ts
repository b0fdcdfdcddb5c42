/**
 * Budget modes and the pure half of budget resolution (seed 000 "Budget Resolution by Backend",
 * seed 001 "Budget Resolution"). ServerManager supplies the I/O (nvidia-smi, /props).
 */
import { BudgetResolutionError, ContextDiscoveryError, InvalidArgumentError } from "../core/errors.js";
import type { HardwareProfile } from "../context/hardware.js";

/**
 * How the context budget is chosen.
 * - `backend`: trust the backend's own default, send no override.
 * - `manual`: the caller's exact token count.
 * - `forge-full`: the largest safe window (Ollama VRAM tier, llama-server auto-tuned n_ctx).
 * - `forge-fast`: half of forge-full, trading context for faster attention.
 *
 * @example
 * await server.startWithBudget({ ggufPath, budgetMode: BudgetMode.FORGE_FAST });
 */
export const BudgetMode = {
  BACKEND: "backend",
  MANUAL: "manual",
  FORGE_FULL: "forge-full",
  FORGE_FAST: "forge-fast",
} as const;
export type BudgetMode = (typeof BudgetMode)[keyof typeof BudgetMode];

const MODES: ReadonlySet<string> = new Set(Object.values(BudgetMode));

/**
 * Ollama's default context per total VRAM in GiB (docs: <24 → 4K, 24–48 → 32K, ≥48 → 256K).
 * The thresholds are Ollama's own from server/routes.go, one GiB below the documented ones
 * ("to account for small differences in the exact value"): a 24 GB card reports ~23.99 GiB
 * (RTX 4090: 24,564 MiB) and Ollama gives it 32K, so the budget must too.
 */
export const OLLAMA_VRAM_TIERS = [
  { minGb: 47, tokens: 262_144 },
  { minGb: 23, tokens: 32_768 },
  { minGb: 0, tokens: 4_096 },
] as const;

/** Ollama's own default context when it runs without a usable GPU. */
export const OLLAMA_DEFAULT_CONTEXT = 4_096;

/**
 * Validate a budget mode string.
 *
 * @example
 * assertBudgetMode("forge-full"); // ok; assertBudgetMode("full") throws InvalidArgumentError
 */
export function assertBudgetMode(mode: unknown): asserts mode is BudgetMode {
  if (typeof mode !== "string" || !MODES.has(mode)) {
    throw new InvalidArgumentError("budgetMode", `${JSON.stringify(mode)} is not one of ${[...MODES].join(", ")}`);
  }
}

/**
 * MANUAL needs a positive integer.
 *
 * @example
 * validateManualTokens(8192); // 8192
 */
export function validateManualTokens(manualTokens: unknown): number {
  if (typeof manualTokens !== "number" || !Number.isInteger(manualTokens) || manualTokens <= 0) {
    throw new InvalidArgumentError("manualTokens", `manual budget mode needs a positive integer token count, got ${String(manualTokens)}`);
  }
  return manualTokens;
}

/**
 * The Ollama tier for a total VRAM size in MiB (nvidia-smi's unit): <23 GiB → 4,096;
 * 23–47 GiB → 32,768; ≥47 GiB → 262,144 (Ollama's own cut-offs, see OLLAMA_VRAM_TIERS).
 *
 * @example
 * ollamaTierBudget(24_564); // 32768 (RTX 4090)
 */
export function ollamaTierBudget(vramTotalMb: number): number {
  const gb = vramTotalMb / 1024;
  for (const tier of OLLAMA_VRAM_TIERS) if (gb >= tier.minGb) return tier.tokens;
  return OLLAMA_DEFAULT_CONTEXT;
}

/**
 * Ollama budget for a mode (MANUAL is handled by the caller). FORGE_FULL/FAST need a detected
 * GPU; BACKEND mirrors what Ollama itself will use, which is 4,096 without a GPU.
 *
 * @example
 * resolveOllamaBudget("forge-fast", { gpuName: "RTX 4090", vramTotalMb: 24564, vramTotalGb: 23.99, gpus: [] }); // 16384
 */
export function resolveOllamaBudget(mode: Exclude<BudgetMode, "manual">, hardware: HardwareProfile | undefined): number {
  if (!hardware) {
    if (mode === BudgetMode.BACKEND) return OLLAMA_DEFAULT_CONTEXT;
    throw new BudgetResolutionError(
      `Budget mode "${mode}" on Ollama needs the GPU's VRAM, but no NVIDIA GPU was detected (nvidia-smi not found); ` +
        `use budgetMode "manual" with manualTokens`,
    );
  }
  const full = ollamaTierBudget(hardware.vramTotalMb);
  return mode === BudgetMode.FORGE_FAST ? halfBudget(full) : full;
}

/**
 * Half a context (FORGE_FAST), rounded down.
 *
 * @example
 * halfBudget(32768); // 16384
 */
export function halfBudget(tokens: number): number {
  return Math.floor(tokens / 2);
}

/**
 * Read `default_generation_settings.n_ctx` from a llama-server / llamafile `/props` body.
 *
 * @example
 * parsePropsContext('{"default_generation_settings":{"n_ctx":8192}}'); // 8192
 */
export function parsePropsContext(body: string): number {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch (cause) {
    throw new ContextDiscoveryError("/props answered with a body that is not JSON", body, { cause });
  }
  const settings = (parsed as { default_generation_settings?: { n_ctx?: unknown } } | null)?.default_generation_settings;
  const nCtx = settings?.n_ctx;
  if (typeof nCtx !== "number" || !Number.isInteger(nCtx) || nCtx <= 0) {
    throw new ContextDiscoveryError("/props has no positive integer default_generation_settings.n_ctx", body);
  }
  return nCtx;
}
