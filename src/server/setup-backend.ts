/**
 * One call that wires a backend together (seed 000 "One-Call Setup"): start the server (or
 * attach to Ollama), resolve the budget, size the client, build the ContextManager, and log
 * every choice made on the caller's behalf.
 */
import type { LLMClient } from "../core/llm.js";
import { InvalidArgumentError } from "../core/errors.js";
import { ContextManager, TieredCompact, type CompactEvent, type CompactStrategy } from "../context/index.js";
import type { HardwareProfile } from "../context/hardware.js";
import { LlamafileClient } from "../clients/llamafile.js";
import { OllamaClient } from "../clients/ollama.js";
import { BudgetMode } from "./budget.js";
import { consoleLogger, type ForgeLogger } from "../core/logger.js";
import { toWireSampling, type SamplingParams } from "../models/sampling.js";
import { ServerManager, type BackendKind, type StartOptions } from "./server-manager.js";

export interface SetupBackendOptions extends StartOptions {
  backend: BackendKind;
  budgetMode?: BudgetMode;
  manualTokens?: number;
  /** Your client; when omitted one is built (OllamaClient, or LlamafileClient on the managed server). */
  client?: LLMClient;
  strategy?: CompactStrategy;
  compactThreshold?: number;
  onCompact?: (event: CompactEvent) => void;
  /** Only for the client setupBackend builds itself. */
  recommendedSampling?: boolean;
  sampling?: SamplingParams;
  port?: number;
  host?: string;
  binary?: string;
  ollamaBaseUrl?: string;
  healthTimeoutMs?: number;
  logger?: ForgeLogger;
  detectHardware?: () => Promise<HardwareProfile | undefined>;
}

export interface BackendSetup {
  server: ServerManager;
  contextManager: ContextManager;
  client: LLMClient;
  budgetTokens: number;
}

interface NumCtxSettable {
  setNumCtx(numCtx: number | undefined): void;
}

function hasSetNumCtx(client: LLMClient): client is LLMClient & NumCtxSettable {
  return typeof (client as Partial<NumCtxSettable>).setNumCtx === "function";
}

/**
 * @example
 * const client = new OllamaClient({ model: "qwen3:14b" });
 * const { server, contextManager } = await setupBackend({
 *   backend: "ollama", model: "qwen3:14b", budgetMode: BudgetMode.FORGE_FULL, client,
 * }); // client.setNumCtx(budget) was called
 * const runner = new WorkflowRunner({ client, contextManager });
 * // ... run workflows ...
 * await server.stop();
 */
export async function setupBackend(options: SetupBackendOptions): Promise<BackendSetup> {
  const logger = options.logger ?? consoleLogger;
  const { backend } = options;
  if (backend === "ollama" && !options.model) throw new InvalidArgumentError("model", 'backend "ollama" needs the model tag');
  if (backend !== "ollama" && !options.ggufPath) throw new InvalidArgumentError("ggufPath", `backend "${backend}" needs the model file`);

  const server = new ServerManager({
    backend,
    port: options.port,
    host: options.host,
    binary: options.binary,
    ollamaBaseUrl: options.ollamaBaseUrl,
    healthTimeoutMs: options.healthTimeoutMs,
    logger,
    detectHardware: options.detectHardware,
  });
  try {
    return await wire(options, server, logger);
  } catch (error) {
    // A process we spawned must not outlive a setup that never handed the caller its server.
    if (backend !== "ollama") await stopAfterFailure(server, error);
    throw error;
  }
}

async function stopAfterFailure(server: ServerManager, error: unknown): Promise<void> {
  try {
    await server.stop();
  } catch (stopError) {
    throw new AggregateError([error, stopError], "setupBackend failed and stopping the server it started failed too");
  }
}

async function wire(options: SetupBackendOptions, server: ServerManager, logger: ForgeLogger): Promise<BackendSetup> {
  const { backend, budgetMode = BudgetMode.BACKEND, manualTokens } = options;
  const budgetTokens = await server.startWithBudget({
    model: options.model,
    ggufPath: options.ggufPath,
    mode: options.mode,
    extraFlags: options.extraFlags,
    ctxOverride: options.ctxOverride,
    cacheTypeK: options.cacheTypeK,
    cacheTypeV: options.cacheTypeV,
    nSlots: options.nSlots,
    budgetMode,
    manualTokens,
  });

  // BACKEND means "no override sent": Ollama keeps its own num_ctx.
  const numCtx = backend === "ollama" && budgetMode !== BudgetMode.BACKEND ? budgetTokens : undefined;
  let client = options.client;
  if (client) {
    if (numCtx !== undefined && hasSetNumCtx(client)) client.setNumCtx(numCtx);
  } else {
    client = buildClient(options, server, numCtx, logger);
  }

  const strategy = options.strategy ?? new TieredCompact({ keepRecent: 2 });
  const contextManager = new ContextManager({
    strategy,
    budgetTokens,
    compactThreshold: options.compactThreshold,
    onCompact: options.onCompact,
  });
  logger.info(
    `setupBackend: ${backend} at ${server.baseUrl}, budget ${budgetTokens} tokens (mode ${budgetMode}), ` +
      `${numCtx !== undefined ? `num_ctx ${numCtx} sent on every request, ` : ""}` +
      `strategy ${strategy.constructor.name}, compaction at ${contextManager.triggerTokens} tokens, client ${client.constructor.name}`,
  );
  return { server, contextManager, client, budgetTokens };
}

function buildClient(options: SetupBackendOptions, server: ServerManager, numCtx: number | undefined, logger: ForgeLogger): LLMClient {
  // The client applies the sampling policy itself (clientSampling); hand it the caller's fields.
  const sampling = toWireSampling(options.sampling ?? {});
  const recommendedSampling = options.recommendedSampling ?? false;
  const clientLogger = (level: "info" | "warn", message: string): void => logger[level](message);
  if (options.backend === "ollama") {
    return new OllamaClient({
      model: options.model!,
      baseUrl: server.baseUrl,
      temperature: sampling.temperature,
      options: sampling.extra,
      recommendedSampling,
      numCtx,
      logger: clientLogger,
    });
  }
  return new LlamafileClient({
    ggufPath: options.ggufPath!,
    baseUrl: `${server.baseUrl}/v1`,
    mode: options.mode,
    temperature: sampling.temperature,
    sampling: sampling.extra,
    recommendedSampling,
    logger: clientLogger,
  });
}
