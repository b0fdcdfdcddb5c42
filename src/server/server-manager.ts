/**
 * ServerManager owns a backend's lifecycle (spawn, health polling, reuse, stop) and is the
 * single answer to "how much context can I use?" (seed 000 "Server Management and Budget
 * Resolution"). Ollama is a daemon we do not own: start records the model, stop unloads it.
 */
import { BackendError, BudgetResolutionError, InvalidArgumentError, ServerError } from "../core/errors.js";
import { detectHardware as detectNvidia, type HardwareProfile } from "../context/hardware.js";
import {
  BudgetMode,
  assertBudgetMode,
  halfBudget,
  parsePropsContext,
  resolveOllamaBudget,
  validateManualTokens,
} from "./budget.js";
import { buildLaunchCommand } from "./launch-command.js";
import { consoleLogger, type ForgeLogger } from "../core/logger.js";
import { ManagedProcess } from "./managed-process.js";

export type BackendKind = "ollama" | "llamaserver" | "llamafile";
const BACKENDS: readonly BackendKind[] = ["ollama", "llamaserver", "llamafile"];

export interface ServerManagerOptions {
  backend: BackendKind;
  port?: number;
  host?: string;
  /** Path to the llama-server / llamafile executable (default: found on PATH). */
  binary?: string;
  ollamaBaseUrl?: string;
  healthTimeoutMs?: number;
  logger?: ForgeLogger;
  /** GPU probe for Ollama tiers; injectable for tests. */
  detectHardware?: () => Promise<HardwareProfile | undefined>;
}

export interface StartOptions {
  model?: string;
  ggufPath?: string;
  mode?: "native" | "prompt" | "auto";
  extraFlags?: string[];
  ctxOverride?: number;
  cacheTypeK?: string;
  cacheTypeV?: string;
  nSlots?: number;
}

export interface StartWithBudgetOptions extends StartOptions {
  budgetMode?: BudgetMode;
  manualTokens?: number;
}

interface Running {
  process: ManagedProcess;
  key: string;
}

/**
 * @example
 * const server = new ServerManager({ backend: "llamaserver", port: 8080 });
 * const budget = await server.startWithBudget({ ggufPath: "/models/Qwen3-8B-Q4_K_M.gguf", budgetMode: BudgetMode.FORGE_FULL });
 * // ... run workflows against server.baseUrl ...
 * await server.stop();
 */
export class ServerManager {
  readonly backend: BackendKind;
  readonly port: number;
  readonly host: string;
  private readonly binary: string | undefined;
  private readonly ollamaBaseUrl: string;
  private readonly healthTimeoutMs: number;
  private readonly logger: ForgeLogger;
  private readonly probeHardware: () => Promise<HardwareProfile | undefined>;
  private running: Running | undefined;
  private lastTail = "";
  /** start/stop/startWithBudget run one at a time, so two callers cannot spawn two servers. */
  private queue: Promise<unknown> = Promise.resolve();
  private ollamaModel: string | undefined;
  /** Set when FORGE_FAST restarted the server with half its context. */
  private fastCtx: number | undefined;

  constructor(options: ServerManagerOptions) {
    if (!options || !BACKENDS.includes(options.backend)) {
      throw new InvalidArgumentError("backend", `use one of ${BACKENDS.join(", ")}`);
    }
    const port = options.port ?? 8080;
    // Port 0 ("any free port") cannot work: the server would pick one we never learn, and the
    // health poll would wait out healthTimeoutMs against :0.
    if (!Number.isInteger(port) || port < 1 || port > 65535) throw new InvalidArgumentError("port", `${port} is not a TCP port (1-65535)`);
    const healthTimeoutMs = options.healthTimeoutMs ?? 120_000;
    if (!(healthTimeoutMs > 0)) throw new InvalidArgumentError("healthTimeoutMs", "must be a positive number of milliseconds");
    this.backend = options.backend;
    this.port = port;
    this.host = options.host ?? "127.0.0.1";
    this.binary = options.binary;
    this.ollamaBaseUrl = (options.ollamaBaseUrl ?? "http://127.0.0.1:11434").replace(/\/+$/, "");
    this.healthTimeoutMs = healthTimeoutMs;
    this.logger = options.logger ?? consoleLogger;
    this.probeHardware = options.detectHardware ?? (() => detectNvidia());
  }

  /** Where clients should send requests. */
  get baseUrl(): string {
    return this.backend === "ollama" ? this.ollamaBaseUrl : `http://${this.host}:${this.port}`;
  }

  /** The running process id (llama-server / llamafile), if any. */
  get pid(): number | undefined {
    return this.running?.process.pid;
  }

  /** The last ~4 KB the (current or last) server process wrote. */
  get stderrTail(): string {
    return this.running?.process.tail ?? this.lastTail;
  }

  /**
   * Start the backend (no process for Ollama). A running process with identical settings is
   * reused; different settings restart it.
   */
  start(options: StartOptions = {}): Promise<void> {
    return this.serial(() => this.startNow(options));
  }

  private async startNow(options: StartOptions): Promise<void> {
    if (this.backend === "ollama") {
      const unsupported = (["ggufPath", "extraFlags", "ctxOverride", "cacheTypeK", "cacheTypeV", "nSlots"] as const).filter(
        (k) => options[k] !== undefined,
      );
      if (unsupported.length > 0) {
        throw new InvalidArgumentError(unsupported[0]!, `backend "ollama" does not take ${unsupported.join(", ")} (llama-server/llamafile only)`);
      }
      if (!options.model) throw new InvalidArgumentError("model", 'backend "ollama" needs the model tag, e.g. "qwen3:8b"');
      this.ollamaModel = options.model;
      return;
    }
    const launch = buildLaunchCommand({
      backend: this.backend,
      binary: this.binary,
      ggufPath: options.ggufPath ?? "",
      host: this.host,
      port: this.port,
      mode: options.mode,
      ctxOverride: options.ctxOverride,
      cacheTypeK: options.cacheTypeK,
      cacheTypeV: options.cacheTypeV,
      nSlots: options.nSlots,
      extraFlags: options.extraFlags,
    });
    const key = JSON.stringify(launch);
    if (this.running && !this.running.process.hasExited && this.running.key === key && (await this.isHealthy())) {
      this.logger.info(`Reusing ${this.backend} (pid ${this.running.process.pid}) with identical settings`);
      return;
    }
    await this.stopProcess();
    this.fastCtx = undefined;
    // Something else answering on our port (a stale server from an earlier run) would pass the
    // health poll while the new process dies on the busy port: refuse instead of adopting it.
    if (await this.isHealthy()) {
      throw new ServerError(
        `${this.baseUrl}/health already answers before ${this.backend} was started: another server holds port ${this.port}; ` +
          "stop it or choose another port",
        "",
      );
    }
    const proc = ManagedProcess.spawn(launch, this.backend, this.logger);
    this.running = { process: proc, key };
    try {
      await proc.waitHealthy(() => this.isHealthy(), this.healthTimeoutMs, this.baseUrl);
    } catch (error) {
      this.lastTail = proc.tail;
      this.running = undefined;
      throw error;
    }
  }

  /** Stop the process (killing its whole group), or unload the model from Ollama. */
  stop(): Promise<void> {
    return this.serial(() => this.stopNow());
  }

  private async stopNow(): Promise<void> {
    if (this.backend === "ollama") {
      if (this.ollamaModel === undefined) return;
      const model = this.ollamaModel;
      let response: Response;
      try {
        response = await fetch(`${this.ollamaBaseUrl}/api/generate`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ model, keep_alive: 0 }),
          signal: AbortSignal.timeout(30_000),
        });
      } catch (cause) {
        throw new ServerError(`Could not reach Ollama at ${this.ollamaBaseUrl} to unload "${model}"`, "", { cause });
      }
      const body = await response.text();
      if (!response.ok) throw new BackendError(response.status, body, `Ollama refused to unload "${model}": HTTP ${response.status}: ${body.slice(0, 500)}`);
      this.ollamaModel = undefined;
      this.logger.info(`Unloaded "${model}" from Ollama`);
      return;
    }
    await this.stopProcess();
  }

  /** GET /health answers 200. */
  async isHealthy(): Promise<boolean> {
    try {
      const response = await fetch(`${this.baseUrl}/health`, { signal: AbortSignal.timeout(2_000) });
      await response.arrayBuffer();
      return response.ok;
    } catch {
      return false; // not listening yet, or mid-restart: "not healthy" is the answer
    }
  }

  /** `default_generation_settings.n_ctx` from the running llama-server / llamafile. */
  async getServerContext(): Promise<number> {
    if (this.backend === "ollama") throw new InvalidArgumentError("backend", "Ollama has no /props endpoint");
    let response: Response;
    try {
      response = await fetch(`${this.baseUrl}/props`, { signal: AbortSignal.timeout(10_000) });
    } catch (cause) {
      throw new BudgetResolutionError(`Could not reach ${this.baseUrl}/props to read the context size`, { cause });
    }
    const body = await response.text();
    if (!response.ok) {
      throw new BudgetResolutionError(`${this.baseUrl}/props answered HTTP ${response.status}`, { cause: new BackendError(response.status, body) });
    }
    return parsePropsContext(body);
  }

  /**
   * The context budget for a mode. MANUAL returns `manualTokens` (startWithBudget launches
   * llama-server with `-c manualTokens`). Ollama BACKEND/FULL/FAST use the VRAM tier;
   * llama-server ones read /props (FAST halves it unless startWithBudget already restarted
   * the server at half).
   */
  async resolveBudget(mode: BudgetMode, manualTokens?: number): Promise<number> {
    assertBudgetMode(mode);
    if (mode === BudgetMode.MANUAL) return validateManualTokens(manualTokens);
    if (this.backend === "ollama") {
      const hardware = await this.probeHardware();
      const budget = resolveOllamaBudget(mode, hardware);
      this.logger.info(
        `Budget ${budget} tokens (mode ${mode}, Ollama tier for ` +
          (hardware ? `${hardware.gpuName}, ${hardware.vramTotalGb.toFixed(1)} GB VRAM)` : "no detected GPU)"),
      );
      return budget;
    }
    const nCtx = await this.getServerContext();
    if (mode === BudgetMode.FORGE_FAST && this.fastCtx === undefined) {
      this.logger.info(`Budget ${halfBudget(nCtx)} tokens (forge-fast: half of the server's n_ctx ${nCtx}; server not restarted)`);
      return halfBudget(nCtx);
    }
    this.logger.info(`Budget ${nCtx} tokens (mode ${mode}, ${this.backend} /props n_ctx)`);
    return nCtx;
  }

  /**
   * Start and resolve the budget in one call. FORGE_FAST on llama-server starts without `-c`,
   * reads the auto-tuned n_ctx, restarts with `-c` half of it (times slots), and re-reads /props.
   * MANUAL on llama-server starts with `-c manualTokens` and returns /props' per-slot n_ctx.
   */
  startWithBudget(options: StartWithBudgetOptions = {}): Promise<number> {
    return this.serial(() => this.startWithBudgetNow(options));
  }

  private async startWithBudgetNow(options: StartWithBudgetOptions): Promise<number> {
    const { budgetMode = BudgetMode.BACKEND, manualTokens, ...start } = options;
    assertBudgetMode(budgetMode);
    if (budgetMode === BudgetMode.MANUAL) validateManualTokens(manualTokens);
    if (this.backend === "ollama") {
      await this.startNow(start);
      return this.resolveBudget(budgetMode, manualTokens);
    }
    if (budgetMode === BudgetMode.MANUAL) {
      await this.startNow({ ...start, ctxOverride: manualTokens });
      // -c sizes the whole pool; with --parallel N each slot (one conversation) gets 1/N of it.
      const perSlot = await this.getServerContext();
      this.logger.info(`Budget ${perSlot} tokens (mode manual: -c ${manualTokens}, /props n_ctx per slot)`);
      return perSlot;
    }
    if (budgetMode === BudgetMode.FORGE_FAST) {
      await this.startNow({ ...start, ctxOverride: undefined });
      const reported = await this.getServerContext();
      // /props reports the per-slot window; -c sizes the whole pool.
      const half = halfBudget(reported * (start.nSlots ?? 1));
      this.logger.info(`forge-fast: server auto-tuned n_ctx ${reported}; restarting with -c ${half}`);
      await this.startNow({ ...start, ctxOverride: half });
      this.fastCtx = half;
      return this.resolveBudget(budgetMode);
    }
    await this.startNow(start);
    return this.resolveBudget(budgetMode);
  }

  private async stopProcess(): Promise<void> {
    const running = this.running;
    this.running = undefined;
    if (!running) return;
    this.lastTail = running.process.tail;
    await running.process.stop();
  }

  private serial<T>(task: () => Promise<T>): Promise<T> {
    const result = this.queue.then(task, task);
    this.queue = result.catch(() => undefined);
    return result;
  }
}
