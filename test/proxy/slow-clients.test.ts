/**
 * Slow clients hold nothing: 300 sockets dripping one header byte at a time never keep a normal
 * request from being answered, and each is cut once the headers timeout passes (checked every
 * second, so a socket no longer lives for Node's 30 s check plus the timeout). Past
 * `maxConnections`, a new socket is closed at accept.
 */
import { connect, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { proxyRig } from "./support/harness.js";

function slowClient(port: number): { socket: Socket; closed: Promise<void>; stop(): void } {
  const socket = connect(port, "127.0.0.1");
  const head = "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n";
  let i = 0;
  // Pacing the attack, not waiting on the server: one byte every 100 ms, never the blank line.
  const drip = setInterval(() => socket.writable && socket.write(head[i++ % head.length]!), 100);
  socket.on("error", () => undefined);
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  return { socket, closed, stop: () => (clearInterval(drip), socket.destroy()) };
}

describe("slow clients", () => {
  it("300 slow-header sockets: a normal request is answered meanwhile, and every one of them is cut after the headers timeout", async () => {
    const rig = await proxyRig([{ content: "hello" }], { proxy: { headersTimeoutMs: 3_000 } });
    const port = Number(new URL(rig.url).port);
    const slow = Array.from({ length: 300 }, () => slowClient(port));
    try {
      await Promise.all(slow.map((s) => new Promise((resolve) => s.socket.once("connect", resolve))));
      let open = 0;
      const res = await fetch(`${rig.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "qwen3:8b", messages: [{ role: "user", content: "hi" }] }) });
      open = slow.filter((s) => !s.socket.destroyed).length;
      expect(res.status).toBe(200);
      expect(((await res.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content).toBe("hello");
      expect(open).toBeGreaterThan(250); // answered while the slow sockets were still there
      // The server cuts them (they never stop dripping by themselves).
      await Promise.all(slow.map((s) => s.closed));
      expect((await fetch(`${rig.url}/health`)).status).toBe(200);
    } finally {
      for (const s of slow) s.stop();
    }
  });

  it("past maxConnections a new socket is closed at once; the ones inside are served", async () => {
    const rig = await proxyRig([{ content: "hello" }], { proxy: { maxConnections: 5, headersTimeoutMs: 5_000 } });
    const port = Number(new URL(rig.url).port);
    const held = Array.from({ length: 5 }, () => slowClient(port));
    try {
      await Promise.all(held.map((s) => new Promise((resolve) => s.socket.once("connect", resolve))));
      const extra = slowClient(port);
      await extra.closed;
      expect(held.every((s) => !s.socket.destroyed)).toBe(true);
    } finally {
      for (const s of held) s.stop();
    }
  });
});
