/**
 * A TCP port free on 127.0.0.1 right now, for a server that binds it itself (redis-server,
 * PostgreSQL, a fake llama-server). Drawn at random below the kernel's ephemeral range, which
 * listen(0) and outgoing connections take their ports from: a port listen(0) handed out and
 * gave back is soon handed out again on a busy machine, and the server then finds it taken.
 */
import { readFileSync } from "node:fs";
import net from "node:net";

/** The first port of the ephemeral range (Linux's setting; 32768, its default, elsewhere). */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 11_000 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

const isFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const server = net.createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });

export async function freePort(): Promise<number> {
  const low = ephemeralLow();
  for (let tries = 0; tries < 100; tries++) {
    const port = 10_000 + Math.floor(Math.random() * (low - 10_000));
    if (await isFree(port)) return port;
  }
  throw new Error(`freePort: no free port in 10000-${low - 1} after 100 tries`);
}
