/**
 * A TCP relay in front of a real server that can freeze: while frozen it forwards nothing and
 * closes nothing, so a client sees a peer that is connected and silent, as behind a network
 * partition that drops packets or in front of a server stopped with SIGSTOP (the kernel still
 * accepts connections and acknowledges bytes; no answer ever comes). New connections are
 * accepted while frozen and get nothing either. `thaw()` delivers what was held, in order,
 * with the closes that came meanwhile; bytes held from or for a client that has gone since are
 * dropped, as its kernel would have discarded them with the socket.
 *
 * `freeze("replies")` holds only the server's side: requests reach the server and take effect,
 * their answers do not come back (a write whose outcome the client cannot know).
 */
import net from "node:net";

export interface FrozenRelay {
  /** The loopback port it listens on. */
  readonly port: number;
  /** Connections accepted so far (a client that reconnects shows here). */
  readonly accepted: number;
  freeze(what?: "both" | "replies"): void;
  thaw(): void;
  close(): Promise<void>;
}

/** @example const relay = await startRelay(server.port); relay.freeze(); ...; relay.thaw(); */
export async function startRelay(targetPort: number, targetHost = "127.0.0.1"): Promise<FrozenRelay> {
  let frozen: "both" | "replies" | undefined;
  let held: (() => void)[] = [];
  let accepted = 0;
  const sockets = new Set<net.Socket>();
  const holds = (toClient: boolean) => frozen === "both" || (frozen === "replies" && toClient);

  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => undefined); // a reset is a close, passed on (or held) like one
  };
  /** Bytes and the close from `from` to `to`, each held while that direction is frozen. */
  const pass = (from: net.Socket, to: net.Socket, toClient: boolean) => {
    const client = toClient ? to : from;
    from.on("data", (chunk: Buffer) => {
      const send = () => void (client.destroyed || to.destroyed || to.write(chunk));
      if (holds(toClient)) held.push(send);
      else send();
    });
    from.on("close", () => {
      const end = () => void to.destroy();
      if (holds(toClient)) held.push(end);
      else end();
    });
  };

  const server = net.createServer((client) => {
    accepted++;
    const upstream = net.connect(targetPort, targetHost);
    track(client);
    track(upstream);
    pass(client, upstream, false);
    pass(upstream, client, true);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });

  return {
    port: (server.address() as net.AddressInfo).port,
    get accepted() {
      return accepted;
    },
    freeze: (what = "both") => void (frozen = what),
    thaw: () => {
      frozen = undefined;
      const pending = held;
      held = [];
      for (const deliver of pending) deliver();
    },
    close: async () => {
      held = [];
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
