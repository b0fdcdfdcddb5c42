/**
 * A real redis-server (Debian's package, which .ci/run installs) on a free loopback port, with
 * an append-only file so that a restart keeps the queues. A missing server fails loudly.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { freePort } from "./free-port.js";
import type { ServerPlace } from "./postgres-server.js";

export function redisServerPath(): string {
  try {
    return execFileSync("sh", ["-c", "command -v redis-server"], { encoding: "utf8" }).trim();
  } catch {
    throw new Error("queue tests need Debian's redis-server: apt-get install redis-server (.ci/run installs it)");
  }
}

export interface TestRedis {
  url: string;
  port: number;
  /** Stop (SIGKILL: nothing flushed beyond what appendfsync always wrote) and start again on the same port. */
  restart(): Promise<void>;
  /** Stop it (SIGKILL) for a while: `up()` starts it again on the same port, with the same data. */
  down(): Promise<void>;
  up(): Promise<void>;
  stop(): Promise<void>;
}

/** Ports tried before giving up: another process may take the free port before redis binds it. */
const PORT_TRIES = 5;

/**
 * Starts a redis-server of its own (own port, own directory): two test files running at once
 * never share one. The free port is picked, then bound by redis-server; if something else took
 * it in between, another port is tried.
 */
export async function startRedis(place: ServerPlace = {}): Promise<TestRedis> {
  const binary = redisServerPath();
  const host = place.host ?? "127.0.0.1";
  const dir = mkdtempSync(path.join(tmpdir(), "forge-redis-"));
  let child: ChildProcess | undefined;
  const launch = (port: number) =>
    new Promise<void>((resolve, reject) => {
      const argv = ["--port", String(port), "--bind", host, "--save", "", "--appendonly", "yes", "--appendfsync", "always", "--dir", dir, ...(host === "127.0.0.1" ? [] : ["--protected-mode", "no"])];
      const [file, args] = place.on ? place.on(binary, argv) : [binary, argv];
      const c = spawn(file, args, { stdio: ["ignore", "pipe", "pipe"] });
      child = c;
      let out = "";
      const onData = (d: Buffer) => {
        out += d.toString();
        if (out.includes("Ready to accept connections")) resolve();
      };
      c.stdout!.on("data", onData);
      c.once("exit", (code) => reject(Object.assign(new Error(`redis-server exited ${code}: ${out}`), { inUse: /Address already in use/i.test(out) })));
    });
  const kill = async () => {
    const c = child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise((resolve) => c.once("exit", resolve));
    c.kill("SIGKILL");
    await exited;
  };
  let port = 0;
  for (let attempt = 1; ; attempt++) {
    port = place.port ?? (await freePort());
    try {
      await launch(port);
      break;
    } catch (error) {
      if (!(error as { inUse?: boolean }).inUse || attempt === PORT_TRIES || place.port !== undefined) {
        rmSync(dir, { recursive: true, force: true });
        throw error;
      }
    }
  }
  const up = () => launch(port);
  return {
    url: `redis://${host}:${port}`,
    port,
    restart: async () => {
      await kill();
      await up();
    },
    down: kill,
    up,
    stop: async () => {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
