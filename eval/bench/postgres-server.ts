/**
 * A real PostgreSQL server (Debian's postgresql package, which .ci/run installs) in a temporary
 * directory on a free loopback port, with trust auth and fsync on. Missing binaries fail loudly.
 *
 * Debian keeps the binaries off PATH, in /usr/lib/postgresql/<version>/bin: the highest version
 * there is used. initdb and the server refuse to run as root, so as root they run as the
 * `postgres` user the package creates.
 *
 * pg_ctl starts the server detached from this process, so a test process that dies without
 * stopping it would leave it running: an exit hook stops it, and a small watchdog shell (which
 * outlives even a SIGKILL of this process) stops it and removes its directory once this
 * process is gone.
 */
import { execFileSync, spawn } from "node:child_process";
import { appendFileSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { freePort } from "./free-port.js";

/** The bin directory of the highest installed PostgreSQL (env FORGE_PG_BIN overrides). */
export function postgresBinDir(): string {
  const given = process.env.FORGE_PG_BIN;
  if (given) {
    if (existsSync(path.join(given, "initdb"))) return given;
    throw new Error(`FORGE_PG_BIN=${given} has no initdb`);
  }
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => /^\d+(\.\d+)?$/.test(v) && existsSync(path.join(root, v, "bin", "initdb")))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions.length === 0) {
    throw new Error("PostgreSQL tests need a server: install Debian's postgresql package (apt-get install postgresql; .ci/run installs it); no /usr/lib/postgresql/*/bin/initdb found");
  }
  return path.join(root, versions[0]!, "bin");
}

export interface TestPostgres {
  /** `postgres://postgres@<host>:<port>/forge` (host 127.0.0.1 unless given) */
  url: string;
  port: number;
  /** The same server, another database (created by `createDatabase`). */
  urlOf(database: string): string;
  createDatabase(name: string): Promise<void>;
  /** Stop at once (pg_ctl stop -m immediate: no shutdown checkpoint, clients cut) and start again on the same port, recovering from the WAL. */
  restart(): Promise<void>;
  /** Stop at once (pg_ctl stop -m immediate) and remove the data directory. */
  stop(): Promise<void>;
}

/** Where a test server runs: its address, port and namespace (127.0.0.1, a free port and this one by default). */
export interface ServerPlace {
  /** The address it listens on (default 127.0.0.1). */
  host?: string;
  /** A fixed port (default a free one). */
  port?: number;
  /** argv running a command where the server lives (another network namespace: netns.ts). */
  on?: (file: string, args: readonly string[]) => [string, string[]];
}

export async function startPostgres(place: ServerPlace = {}): Promise<TestPostgres> {
  const host = place.host ?? "127.0.0.1";
  const bin = postgresBinDir();
  const asRoot = process.getuid?.() === 0;
  const dir = mkdtempSync(path.join(tmpdir(), "forge-pg-"));
  const data = path.join(dir, "data");
  if (asRoot) {
    const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim());
    chownSync(dir, uid, gid);
  }
  /** argv running a PostgreSQL binary, as the postgres user when we are root. */
  const command = (name: string, args: string[]): [string, string[]] => (asRoot ? ["runuser", ["-u", "postgres", "--", path.join(bin, name), ...args]] : [path.join(bin, name), args]);
  const run = (name: string, args: string[]) => {
    const [file, argv] = place.on ? place.on(...command(name, args)) : command(name, args);
    try {
      return execFileSync(file, argv, { cwd: dir, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 60_000 });
    } catch (error) {
      const { stderr, stdout } = error as { stderr?: string; stdout?: string };
      throw new Error(`${name} ${args.join(" ")} failed: ${stderr || stdout || (error as Error).message}`);
    }
  };
  const stopCommand = command("pg_ctl", ["stop", "-D", data, "-m", "immediate", "-w"]);
  const stopNow = () => {
    try {
      execFileSync(stopCommand[0], stopCommand[1], { cwd: dir, stdio: "ignore", timeout: 30_000 });
    } catch {
      // not running (any more)
    }
    rmSync(dir, { recursive: true, force: true });
  };

  // --no-sync: initdb's files need no fsync in a throwaway cluster; the server itself runs with fsync on.
  run("initdb", ["-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions"]);
  // initdb trusts loopback only; a server on another address takes its own subnet's hosts too.
  if (host !== "127.0.0.1") appendFileSync(path.join(data, "pg_hba.conf"), "host all all samenet trust\n");
  const watchdog = spawn("sh", ["-c", `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; ${[stopCommand[0], ...stopCommand[1]].map(shellQuote).join(" ")} >/dev/null 2>&1; rm -rf ${shellQuote(dir)}`], {
    detached: true,
    stdio: "ignore",
  });
  watchdog.unref();
  process.once("exit", stopNow);

  let port = 0;
  const start = () => run("pg_ctl", ["start", "-D", data, "-w", "-t", "60", "-l", path.join(dir, "server.log"), "-o", `-p ${port} -k ${dir} -c listen_addresses=${host} -c fsync=on`]);
  try {
    // A free port can be taken by someone else before the server binds it: try a few.
    for (let attempt = 1; ; attempt++) {
      port = place.port ?? (await freePort());
      try {
        start();
        break;
      } catch (error) {
        if (attempt >= 3 || place.port !== undefined) throw new Error(`${(error as Error).message}\n${tail(path.join(dir, "server.log"))}`);
      }
    }
  } catch (error) {
    process.off("exit", stopNow);
    stopNow();
    watchdog.kill();
    throw error;
  }

  const urlOf = (database: string) => `postgres://postgres@${host}:${port}/${database}`;
  const createDatabase = async (name: string) => {
    run("createdb", ["-h", host, "-p", String(port), "-U", "postgres", name]);
  };
  await createDatabase("forge");
  return {
    url: urlOf("forge"),
    port,
    urlOf,
    createDatabase,
    restart: async () => {
      run("pg_ctl", ["stop", "-D", data, "-m", "immediate", "-w"]);
      start();
    },
    stop: async () => {
      process.off("exit", stopNow);
      stopNow();
      watchdog.kill();
    },
  };
}

function shellQuote(arg: string): string {
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

function tail(file: string): string {
  try {
    return execFileSync("tail", ["-n", "20", file], { encoding: "utf8" });
  } catch {
    return "";
  }
}
