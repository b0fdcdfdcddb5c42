import { serve, type ServerType } from "@hono/node-server";
import { Hono } from "hono";
import { Readable } from "node:stream";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { boundedBody } from "../../src/server/body-limit.js";

const LIMIT = 1024;
let server: ServerType;
let url: string;
const seen: { bodies: number; tooLarge: number } = { bodies: 0, tooLarge: 0 };

beforeAll(async () => {
  const app = new Hono();
  const limit = boundedBody(LIMIT, (c) => {
    seen.tooLarge++;
    return c.json({ error: "too large" }, 413);
  });
  app.post("/echo", limit, async (c) => {
    seen.bodies++;
    return c.text(await c.req.text());
  });
  await new Promise<void>((resolve) => {
    server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, (info) => {
      url = `http://127.0.0.1:${info.port}/echo`;
      resolve();
    });
  });
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** A body sent with Transfer-Encoding: chunked (no length to check), in pieces. */
const chunked = (pieces: string[]) => Readable.from(pieces.map((p) => Buffer.from(p)));

describe("boundedBody", () => {
  it("passes a body with a Content-Length up to the limit, read whole", async () => {
    const body = "é".repeat(LIMIT / 2); // 2 bytes each: exactly the limit
    const res = await request(url, { method: "POST", body });
    expect(res.statusCode).toBe(200);
    expect(await res.body.text()).toBe(body);
  });

  it("refuses a declared length over the limit", async () => {
    const before = { ...seen };
    const res = await request(url, { method: "POST", body: "x".repeat(LIMIT + 1) });
    expect(res.statusCode).toBe(413);
    await res.body.text();
    expect(seen).toEqual({ bodies: before.bodies, tooLarge: before.tooLarge + 1 });
  });

  it("counts a chunked body: under the limit it passes, over it is refused", async () => {
    const ok = await request(url, { method: "POST", body: chunked(["a".repeat(500), "b".repeat(500)]) });
    expect(ok.statusCode).toBe(200);
    expect(await ok.body.text()).toBe("a".repeat(500) + "b".repeat(500));
    const before = { ...seen };
    const big = await request(url, { method: "POST", body: chunked(["a".repeat(800), "b".repeat(800)]) });
    expect(big.statusCode).toBe(413);
    await big.body.text();
    expect(seen).toEqual({ bodies: before.bodies, tooLarge: before.tooLarge + 1 });
  });
});
