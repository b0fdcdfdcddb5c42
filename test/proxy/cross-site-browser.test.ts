/**
 * The browser guard as a browser meets it (headless Chromium, real pages): a page on another
 * site (evil.example, mapped to 127.0.0.1) tries the proxy the ways a page can — a no-cors
 * text/plain POST (sent without a preflight), a CORS fetch with JSON, and a DNS-rebinding page
 * served under the proxy's own port — and reaches the model with none of them; an app on the
 * origin the proxy names with corsOrigins calls it from the browser and reads the answer.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromiumPath } from "../support/browser.js";
import { proxyRig } from "./support/harness.js";

let browser: Browser;
let pages: Server;
let pagePort: number;

beforeAll(async () => {
  // Every name resolves to this machine: evil.example and app.example are other sites to the browser.
  browser = await chromium.launch({ executablePath: chromiumPath(), args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--host-resolver-rules=MAP * 127.0.0.1"] });
  pages = createServer((_req, res) => res.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>page</title>"));
  await new Promise<void>((resolve) => pages.listen(0, "127.0.0.1", resolve));
  pagePort = (pages.address() as AddressInfo).port;
});
afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => pages?.close(resolve));
});

const chatBody = JSON.stringify({ model: "qwen3:8b", messages: [{ role: "user", content: "hi" }] });

describe("the proxy against real web pages", () => {
  it("a page on another site reaches the model in no way a page can try", async () => {
    const rig = await proxyRig(() => ({ content: "hello" }));
    const proxyPort = new URL(rig.url).port;
    const page = await browser.newPage();
    await page.goto(`http://evil.example:${pagePort}/`);
    const tries = await page.evaluate(
      async ({ target, body }) => {
        const out: string[] = [];
        // Sent without a preflight; the page cannot read the answer, but it would reach the model.
        await fetch(`${target}/v1/chat/completions`, { method: "POST", mode: "no-cors", headers: { "content-type": "text/plain" }, body }).then(() => out.push("no-cors sent"), (e: Error) => out.push(`no-cors ${e.name}`));
        await fetch(`${target}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body }).then((r) => out.push(`cors ${r.status}`), (e: Error) => out.push(`cors ${e.name}`));
        await fetch(`${target}/api/chat`, { method: "POST", mode: "no-cors", headers: { "content-type": "text/plain" }, body }).then(() => out.push("ollama no-cors sent"), (e: Error) => out.push(`ollama ${e.name}`));
        return out;
      },
      { target: `http://127.0.0.1:${proxyPort}`, body: chatBody },
    );
    // The CORS fetch fails in the browser (its preflight is refused); the no-cors ones are sent and refused by the proxy.
    expect(tries).toEqual(["no-cors sent", "cors TypeError", "ollama no-cors sent"]);
    // DNS rebinding: the page's own origin is the proxy's port under the attacker's name.
    const rebound = await browser.newPage();
    const res = await rebound.goto(`http://evil.example:${proxyPort}/v1/models`);
    expect(res?.status()).toBe(403);
    const read = await rebound.evaluate(async (body) => (await fetch("/v1/chat/completions", { method: "POST", headers: { "content-type": "application/json" }, body })).status, chatBody);
    expect(read).toBe(403);
    expect(rig.chats()).toHaveLength(0);
  });

  it("an app on the named origin calls it from the browser with the key and reads the answer", async () => {
    const app = `http://app.example:${pagePort}`;
    const key = "k".repeat(32);
    const rig = await proxyRig(() => ({ content: "hello from the model" }), { proxy: { corsOrigins: [app], apiKey: key } });
    const page = await browser.newPage();
    await page.goto(`${app}/`);
    const answer = await page.evaluate(
      async ({ target, body, key }) => {
        const res = await fetch(`${target}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${key}` }, body });
        const data = (await res.json()) as { choices: { message: { content: string } }[] };
        return { status: res.status, content: data.choices[0]!.message.content, id: res.headers.get("x-forge-request-id") !== null };
      },
      { target: rig.url, body: chatBody, key },
    );
    expect(answer).toEqual({ status: 200, content: "hello from the model", id: true });
    expect(rig.chats()).toHaveLength(1);
  });
});
