/**
 * Batch rows whose llama-server the batch runs itself: a `llamaserver` / `llamafile` row with a
 * `ggufPath` and no `baseUrl`. Before the row's first run the batch starts the server through
 * ServerManager, waits for /health, runs the row against it and stops it; consecutive rows with
 * the same launch share one start (reforged and bare of one model load the weights once).
 */
import { accessSync, constants, existsSync, statSync } from "node:fs";
import { delimiter, join, resolve } from "node:path";
import { z } from "zod";
import { shellWord } from "../src/cli-kit/resume-command.js";
import { InvalidArgumentError, ServerError } from "../src/core/index.js";
import type { ForgeLogger } from "../src/core/logger.js";
import { buildLaunchCommand, type LaunchCommand, type ManagedBackend } from "../src/server/launch-command.js";
import { ServerManager, type ServerManagerOptions, type StartOptions } from "../src/server/server-manager.js";

/**
 * The row fields of a managed server, named as ServerManager's options: `port` (default 8080),
 * `binary` (default FORGE_LLAMA_SERVER for llama-server, else the name on PATH), `extraFlags`
 * (put after the built flags) and `ctxOverride` (`-c`). RowSchema spreads them in.
 *
 * @example { "backend": "llamaserver", "model": "Qwen3-8B-Q4_K_M", "ggufPath": "/models/Qwen3-8B-Q4_K_M.gguf", "port": 8081, "extraFlags": ["--reasoning-format", "auto"] }
 */
export const SERVER_ROW_FIELDS = {
  port: z.number().int().min(1).max(65535).optional(),
  binary: z.string().min(1).optional(),
  extraFlags: z.array(z.string()).optional(),
  ctxOverride: z.number().int().positive().optional(),
};

/** What a row says about its server (BatchRow has all of it). */
export interface ServerRow {
  backend: string;
  model: string;
  mode?: string | undefined;
  baseUrl?: string | undefined;
  ggufPath?: string | undefined;
  port?: number | undefined;
  binary?: string | undefined;
  extraFlags?: string[] | undefined;
  ctxOverride?: number | undefined;
}

/** One server the batch would start: the manager's options, the start's, and the exact argv. */
export interface ServerPlan {
  manager: ServerManagerOptions & { backend: ManagedBackend; port: number; host: string };
  start: StartOptions & { ggufPath: string };
  launch: LaunchCommand;
  /** Where the row's client sends its requests. */
  clientBaseUrl: string;
  /** Equal keys: the same process serves both rows. */
  key: string;
}

const HOST = "127.0.0.1";
const DEFAULT_PORT = 8080;
/** Forge's readiness window for llama-server: a large model loads for minutes. */
export const SERVER_READY_TIMEOUT_MS = 180_000;
const MODES = ["native", "prompt", "auto"] as const;
const FIELDS = ["port", "binary", "extraFlags", "ctxOverride"] as const;

/**
 * Whether the batch starts this row's server.
 *
 * @example isManaged({ backend: "llamaserver", model: "m", ggufPath: "/m/a.gguf" }) // true
 */
export function isManaged(row: ServerRow): boolean {
  return (row.backend === "llamaserver" || row.backend === "llamafile") && !!row.ggufPath && !row.baseUrl;
}

/**
 * A row that sets server fields must be a managed row: on any other they would be ignored.
 *
 * @example assertServerFields({ backend: "ollama", model: "qwen3:8b", port: 9000 }, 0) // throws InvalidArgumentError
 */
export function assertServerFields(row: ServerRow, index: number): void {
  const set = FIELDS.filter((f) => row[f] !== undefined);
  if (set.length === 0 || isManaged(row)) return;
  const why = row.baseUrl ? "it has a baseUrl, so its server is not started by the batch" : `only llamaserver/llamafile rows with a ggufPath start their own server`;
  throw new InvalidArgumentError(`rows[${index}].${set[0]}`, `${set.join(", ")} configure a server the batch starts; ${why}`);
}

/**
 * The server a managed row needs (undefined for any other row). The binary is the row's, else
 * FORGE_LLAMA_SERVER (llama-server rows), else what buildLaunchCommand names (found on PATH).
 *
 * @example serverPlan({ backend: "llamaserver", model: "m", ggufPath: "/m/a.gguf" }, {})!.launch.args.join(" ") // "-m /m/a.gguf --host 127.0.0.1 --port 8080 -ngl 999 --jinja"
 */
export function serverPlan(row: ServerRow, env: NodeJS.ProcessEnv = process.env): ServerPlan | undefined {
  if (!isManaged(row)) return undefined;
  const backend = row.backend as ManagedBackend;
  if (row.mode !== undefined && !(MODES as readonly string[]).includes(row.mode)) {
    throw new InvalidArgumentError("mode", `"${row.mode}" is not one of ${MODES.join(", ")}`);
  }
  const binary = row.binary ?? (backend === "llamaserver" && env.FORGE_LLAMA_SERVER ? env.FORGE_LLAMA_SERVER : undefined);
  const port = row.port ?? DEFAULT_PORT;
  const start: ServerPlan["start"] = {
    ggufPath: row.ggufPath!,
    ...(row.mode !== undefined ? { mode: row.mode as (typeof MODES)[number] } : {}),
    ...(row.extraFlags ? { extraFlags: row.extraFlags } : {}),
    ...(row.ctxOverride !== undefined ? { ctxOverride: row.ctxOverride } : {}),
  };
  // The same spec ServerManager.start builds, so the dry run prints what would really be spawned.
  const launch = buildLaunchCommand({ backend, binary, host: HOST, port, ...start });
  return {
    manager: { backend, port, host: HOST, ...(binary !== undefined ? { binary } : {}), healthTimeoutMs: SERVER_READY_TIMEOUT_MS },
    start,
    launch,
    clientBaseUrl: `http://${HOST}:${port}/v1`,
    key: JSON.stringify(launch),
  };
}

/** @example commandLine({ command: "llama-server", args: ["-m", "/my models/a.gguf"] }) // "llama-server -m '/my models/a.gguf'" */
export function commandLine(launch: LaunchCommand): string {
  return [launch.command, ...launch.args].map(shellWord).join(" ");
}

/**
 * Where `command` would be found (a path as given, else the first PATH entry holding it as an
 * executable file), or undefined.
 *
 * @example findExecutable("llama-server", { PATH: "/usr/local/bin:/usr/bin" }) // "/usr/local/bin/llama-server" when it is there
 */
export function findExecutable(command: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const candidates = command.includes("/") ? [resolve(command)] : (env.PATH ?? "").split(delimiter).filter(Boolean).map((dir) => join(dir, command));
  return candidates.find((path) => {
    try {
      accessSync(path, constants.X_OK);
      return statSync(path).isFile();
    } catch {
      return false; // not there or not executable: try the next PATH entry
    }
  });
}

/**
 * What keeps a plan from starting, in one line (undefined when nothing does): the model file
 * or the server executable missing.
 *
 * @example missingPiece(serverPlan({ backend: "llamaserver", model: "m", ggufPath: "/nope.gguf" })!) // "model file not found: /nope.gguf"
 */
export function missingPiece(plan: ServerPlan, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const model = plan.start.ggufPath;
  if (!existsSync(model)) return `model file not found: ${resolve(model)} (the row's ggufPath)`;
  const { command } = plan.launch;
  if (findExecutable(command, env) !== undefined) return undefined;
  if (command === model) return `${model} is not executable (chmod +x it to run a .llamafile as its own server)`;
  const how = plan.manager.backend === "llamaserver" ? `set FORGE_LLAMA_SERVER or the row's "binary" to its path` : `set the row's "binary" to its path`;
  return command.includes("/") ? `server executable not found: ${resolve(command)} (${how})` : `${command} not found on PATH (${how})`;
}

/**
 * Per row, what happens to the batch's server before it, as ManagedServers.use does it:
 * "start" (a new process), "reuse" (the process of the managed row before, same launch), or
 * undefined (no managed server; or no run to do, so the row is skipped and changes nothing).
 *
 * @example serverSteps([{ server: a, todo: 5 }, { server: a, todo: 5 }, { server: undefined, todo: 5 }]) // ["start", "reuse", undefined]
 */
export function serverSteps(rows: readonly { server: ServerPlan | undefined; todo: number }[]): ("start" | "reuse" | undefined)[] {
  let current: string | undefined;
  return rows.map(({ server, todo }) => {
    if (todo === 0) return undefined;
    const step = server === undefined ? undefined : server.key === current ? "reuse" : "start";
    current = server?.key;
    return step;
  });
}

/**
 * The batch's one managed server at a time: `use(plan)` keeps it when the plan is the same
 * launch, else stops it and starts the plan's; `use(undefined)` and `stop()` stop it. A failed
 * start is one line (ServerError naming the config and the server's last output line).
 *
 * @example
 * const servers = new ManagedServers(console.error);
 * try { await servers.use(plan, "llamaserver:m@reforged"); ... } finally { await servers.stop(); }
 */
export class ManagedServers {
  private current: { plan: ServerPlan; server: ServerManager } | undefined;
  private readonly logger: ForgeLogger;

  constructor(private readonly log: (line: string) => void) {
    this.logger = { info: (m) => log(`[eval] ${m}`), warn: (m) => log(`[eval] WARN ${m}`) };
  }

  async use(plan: ServerPlan | undefined, config: string): Promise<void> {
    if (this.current && plan?.key === this.current.plan.key) {
      this.log(`[eval] ${config}: reusing ${plan.manager.backend} (pid ${this.current.server.pid}) started for the row before`);
      return;
    }
    await this.stop();
    if (!plan) return;
    const server = new ServerManager({ ...plan.manager, logger: this.logger });
    // Held before start resolves: a start that fails leaves nothing running, one that is
    // interrupted is still stopped by stop().
    this.current = { plan, server };
    try {
      await server.start(plan.start);
    } catch (error) {
      this.current = undefined;
      await server.stop();
      throw new ServerError(`${config}: ${plan.manager.backend} did not start: ${startFailure(error, server.stderrTail)}`, "", { cause: error });
    }
  }

  async stop(): Promise<void> {
    const current = this.current;
    this.current = undefined;
    if (!current) return;
    const pid = current.server.pid;
    await current.server.stop();
    this.log(`[eval] stopped ${current.plan.manager.backend}${pid !== undefined ? ` (pid ${pid})` : ""}`);
  }
}

/** The first line of the error, and the server's last output line (usually the reason). */
function startFailure(error: unknown, tail: string): string {
  const first = (error instanceof Error ? error.message : String(error)).split("\n")[0]!;
  const last = tail.trim().split("\n").at(-1)?.trim();
  return last ? `${first}; its last output: ${last}` : first;
}
