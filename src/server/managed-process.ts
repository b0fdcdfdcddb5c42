/**
 * One spawned server process: detached into its own process group (stop kills the group,
 * workers included), stderr/stdout kept as a ~4 KB tail for error messages, health polled
 * until ready, and registered for cleanup if the parent exits first.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { ServerError } from "../core/errors.js";
import { registerChildGroup, unregisterChildGroup } from "./child-registry.js";
import type { LaunchCommand } from "./launch-command.js";
import type { ForgeLogger } from "../core/logger.js";

const TAIL_CHARS = 4096;
const POLL_MS = 100;
const STOP_GRACE_MS = 5_000;

/**
 * @example
 * const proc = ManagedProcess.spawn({ command: "llama-server", args: ["-m", path] }, "llamaserver", logger);
 * await proc.waitHealthy(() => isHealthy(), 120_000, "http://127.0.0.1:8080");
 * await proc.stop();
 */
export class ManagedProcess {
  private tailText = "";
  private exited = false;
  private spawnError: Error | undefined;
  private readonly exitPromise: Promise<void>;

  private constructor(
    private readonly child: ChildProcess,
    readonly launch: LaunchCommand,
    private readonly label: string,
    private readonly logger: ForgeLogger,
  ) {
    const append = (chunk: Buffer): void => {
      this.tailText = (this.tailText + chunk.toString("utf8")).slice(-TAIL_CHARS);
    };
    child.stdout?.on("data", append);
    child.stderr?.on("data", append);
    this.exitPromise = new Promise<void>((resolve) => {
      child.once("error", (error) => {
        this.spawnError = error;
        this.exited = true;
        resolve();
      });
      child.once("exit", () => {
        this.exited = true;
        if (child.pid !== undefined) unregisterChildGroup(child.pid);
        resolve();
      });
    });
    if (child.pid !== undefined) registerChildGroup(child.pid);
  }

  static spawn(launch: LaunchCommand, label: string, logger: ForgeLogger): ManagedProcess {
    logger.info(`Starting ${label}: ${launch.command} ${launch.args.join(" ")}`);
    const child = spawn(launch.command, launch.args, { detached: true, stdio: ["ignore", "pipe", "pipe"] });
    return new ManagedProcess(child, launch, label, logger);
  }

  get pid(): number | undefined {
    return this.exited ? undefined : this.child.pid;
  }

  get hasExited(): boolean {
    return this.exited;
  }

  /** The last ~4 KB the process wrote (stderr and stdout interleaved). */
  get tail(): string {
    return this.tailText;
  }

  /** Poll until `isHealthy` answers true; a process exit or the timeout is a ServerError quoting the tail. */
  async waitHealthy(isHealthy: () => Promise<boolean>, timeoutMs: number, where: string): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.exited) {
        if (this.spawnError) {
          throw new ServerError(`Could not start ${this.launch.command}: ${this.spawnError.message}`, this.tailText, { cause: this.spawnError });
        }
        await sleep(20); // let the last output bytes arrive before quoting them
        throw new ServerError(
          `${this.label} exited with code ${this.child.exitCode ?? "null"} (signal ${this.child.signalCode ?? "none"}) before becoming healthy`,
          this.tailText,
        );
      }
      if (await isHealthy()) {
        this.logger.info(`${this.label} healthy at ${where} (pid ${this.child.pid})`);
        return;
      }
      if (Date.now() >= deadline) {
        const tail = this.tailText;
        await this.stop();
        throw new ServerError(`${this.label} did not become healthy within ${timeoutMs} ms at ${where}/health`, tail);
      }
      await sleep(POLL_MS);
    }
  }

  /** SIGTERM the group, SIGKILL after a grace period, then SIGKILL stragglers; resolves once the leader exited. */
  async stop(): Promise<void> {
    if (this.exited) return;
    const pgid = this.child.pid!;
    this.signalGroup(pgid, "SIGTERM");
    const cancelTimer = new AbortController();
    const timeout = sleep(STOP_GRACE_MS, "timeout" as const, { signal: cancelTimer.signal }).catch(() => "cancelled" as const);
    const outcome = await Promise.race([this.exitPromise.then(() => "exited" as const), timeout]);
    cancelTimer.abort();
    if (outcome === "timeout") {
      this.logger.warn(`${this.label} (pid ${pgid}) ignored SIGTERM for ${STOP_GRACE_MS} ms; sending SIGKILL`);
      this.signalGroup(pgid, "SIGKILL");
      await this.exitPromise;
    }
    // Workers that outlived the leader are still in the group.
    this.signalGroup(pgid, "SIGKILL");
    unregisterChildGroup(pgid);
  }

  private signalGroup(pgid: number, signal: NodeJS.Signals): void {
    try {
      process.kill(-pgid, signal);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ESRCH") {
        throw new ServerError(`Could not send ${signal} to process group ${pgid}`, this.tailText, { cause: error });
      }
    }
  }
}
