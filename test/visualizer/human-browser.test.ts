/**
 * The visualizer acts, in headless Debian Chromium: a run parks waiting for a person, the page
 * shows its requests, a click records the decision in the store, the run is continued as
 * another process would (`proceed()`), and the page shows it done. Screenshots land in
 * test-output/visualizer/.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { networkInterfaces, tmpdir } from "node:os";
import path from "node:path";
import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FileRunStore } from "../../src/persistence/file-run-store.js";
import type { RunEvent } from "../../src/persistence/run-store.js";
import { createVisualizer, type Visualizer } from "../../visualizer/server.js";
import { launchChromium, screenshot, watchedPage } from "../support/browser.js";
import { parkedRun, refundsWorkflow } from "./support/waiting-run.js";

let browser: Browser;
let viz: Visualizer;
let url: string;
let storeDir: string;
let store: FileRunStore;

beforeAll(async () => {
  storeDir = mkdtempSync(path.join(tmpdir(), "forge-viz-human-"));
  store = new FileRunStore({ dir: storeDir });
  viz = createVisualizer({ store, workflows: [refundsWorkflow], version: "test" });
  ({ url } = await viz.listen({ port: 0 }));
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await viz?.close();
  rmSync(storeDir, { recursive: true, force: true });
});

const newPage = () => watchedPage(browser);

const decisions = async (runId: string) => (await store.events(runId)).filter((e): e is Extract<RunEvent, { type: "decision" }> => e.type === "decision");
const request = (page: Page, callId: string): Locator => page.locator(`[data-testid=human-request][data-call-id="${callId}"]`);

/** The page shows the run finished: in the run list and as the state of the run shown. */
async function expectDone(page: Page, runId: string) {
  await expect.poll(() => page.getAttribute(`[data-run-id="${runId}"]`, "data-status"), { timeout: 30_000 }).toBe("done");
  await expect.poll(() => page.textContent("[data-testid=current-state]"), { timeout: 30_000 }).toBe("done");
  expect(await page.locator("[data-testid=human]").isHidden()).toBe(true);
}

describe("deciding in the visualizer, in Chromium", () => {
  it("a run waits, the person clicks Approve, the run finishes", async () => {
    const run = await parkedRun(store, "hb-approve", [{ order: "A1", amount: 500 }]);
    const page = await newPage();
    await page.goto(`${url}/#run=hb-approve`);
    const req = request(page, run.callIds[0]!);
    await expect.poll(() => req.count(), { timeout: 30_000 }).toBe(1);
    expect(await page.getAttribute(`[data-run-id="hb-approve"]`, "data-status")).toBe("waiting");
    expect(await page.locator(`[data-run-id="hb-approve"] [data-testid=waiting-badge]`).count()).toBe(1);
    expect(await req.getAttribute("data-tool")).toBe("refund");
    expect(await req.getAttribute("data-kind")).toBe("approval");
    expect(JSON.parse((await req.locator("[data-testid=human-args]").textContent()) ?? "")).toEqual({ order: "A1", amount: 500 });
    expect(await req.innerText()).toMatch(/asked \d/);
    await expect.poll(() => page.textContent("[data-testid=current-state]")).toBe("awaitingHuman");
    await screenshot(page, "human-waiting");

    await req.locator("[data-action=approve]").click();
    await expect.poll(() => req.getAttribute("data-decided")).toBe("approve");
    expect(await req.locator("[data-testid=human-decision]").innerText()).toMatch(/^approved/);
    expect(await decisions("hb-approve")).toMatchObject([{ callId: run.callIds[0], decision: { type: "approve" } }]);
    // Still decided once the run list comes back with the decision as recorded.
    await expect.poll(async () => (await (await fetch(`${url}/api/runs`)).json()).runs.find((r: { runId: string }) => r.runId === "hb-approve")?.requests?.[0]?.decision?.type, { timeout: 30_000 }).toBe("approve");
    expect(await req.getAttribute("data-decided")).toBe("approve");

    await expect(run.proceed()).resolves.toEqual({ status: "done", runId: "hb-approve", result: "refunded 500 on A1" });
    await expectDone(page, "hb-approve");
    await screenshot(page, "human-approved-done");
    expect(page.errors).toEqual([]);
    await page.close();
  }, 120_000);

  it("Reject asks for a reason; edited args the tool refuses show the server's error inline; fixed ones approve", async () => {
    const run = await parkedRun(store, "hb-edit", [{ order: "C1", amount: 200 }, { order: "C2", amount: 300 }]);
    const page = await newPage();
    await page.goto(`${url}/#run=hb-edit`);
    const [first, second] = [request(page, run.callIds[0]!), request(page, run.callIds[1]!)];
    await expect.poll(() => second.count(), { timeout: 30_000 }).toBe(1);

    // Reject: no reason, no request.
    await first.locator("[data-action=reject]").click();
    await first.locator("[data-action=confirm-reject]").click();
    expect(await first.locator("[data-testid=human-error]").innerText()).toMatch(/reason/);
    await first.locator("[data-testid=reject-reason]").fill("duplicate of order C0");
    await first.locator("[data-action=confirm-reject]").click();
    await expect.poll(() => first.getAttribute("data-decided")).toBe("reject");
    expect(await first.locator("[data-testid=human-decision]").innerText()).toContain("rejected: duplicate of order C0");

    // Edit args: prefilled with the call's args; the server's schema check is shown inline.
    await second.locator("[data-action=edit]").click();
    const editor = second.locator("[data-testid=edit-args]");
    expect(JSON.parse(await editor.inputValue())).toEqual({ order: "C2", amount: 300 });
    await editor.fill('{ "order": "C2", "amount": -1 }');
    await second.locator("[data-action=approve-edited]").click();
    const error = second.locator("[data-testid=human-error]");
    await expect.poll(() => error.innerText()).toMatch(/^invalid_args: edited args for refund: amount/);
    expect(await second.getAttribute("data-decided")).toBe("");
    expect(await editor.inputValue()).toBe('{ "order": "C2", "amount": -1 }');
    await screenshot(page, "human-edit-refused");
    await editor.fill("{ amount: 150");
    await second.locator("[data-action=approve-edited]").click();
    await expect.poll(() => error.innerText()).toMatch(/^not JSON/);
    await editor.fill('{ "order": "C2", "amount": 150 }');
    await second.locator("[data-action=approve-edited]").click();
    await expect.poll(() => second.getAttribute("data-decided")).toBe("approve");
    expect(await second.locator("[data-testid=human-decision]").innerText()).toMatch(/^approved with edited args/);

    expect(await decisions("hb-edit")).toMatchObject([
      { callId: run.callIds[0], decision: { type: "reject", reason: "duplicate of order C0" } },
      { callId: run.callIds[1], decision: { type: "approve", args: { order: "C2", amount: 150 } } },
    ]);
    await expect(run.proceed()).resolves.toMatchObject({ status: "done", result: expect.stringMatching(/^\[Rejected\].*duplicate of order C0.* \| refunded 150 on C2$/) });
    await expectDone(page, "hb-edit");
    expect(page.errors.filter((e) => !/status of 409/.test(e))).toEqual([]);
    await page.close();
  }, 120_000);

  it("a question is answered in the page", async () => {
    const run = await parkedRun(store, "hb-answer", [], "Which account should the refund go to?");
    const page = await newPage();
    await page.goto(`${url}/#run=hb-answer`);
    const req = request(page, run.callIds[0]!);
    await expect.poll(() => req.count(), { timeout: 30_000 }).toBe(1);
    expect(await req.getAttribute("data-kind")).toBe("input");
    expect(await req.locator("[data-action=approve]").count()).toBe(0);
    await req.locator("[data-testid=answer]").fill("the savings account");
    await req.locator("[data-action=answer]").click();
    await expect.poll(() => req.getAttribute("data-decided")).toBe("answer");
    expect(await req.locator("[data-testid=human-decision]").innerText()).toMatch(/^answered: the savings account/);
    await expect(run.proceed()).resolves.toMatchObject({ status: "done", result: "the savings account" });
    await expectDone(page, "hb-answer");
    expect(page.errors).toEqual([]);
    await page.close();
  }, 120_000);
});

/** This machine's first non-loopback IPv4 address. */
const external = Object.values(networkInterfaces())
  .flat()
  .find((a) => a && a.family === "IPv4" && !a.internal)?.address;

describe("a visualizer bound beyond loopback, from another address", () => {
  // Never skipped: a machine without a non-loopback interface fails here, loudly.
  it("has a non-loopback IPv4 interface to play the remote peer", () => expect(external).toBeDefined());
  it("the page opened from the printed URL (#token=…) lists runs and records a decision; without the token it says why it cannot", async () => {
    const wide = createVisualizer({ store, workflows: [refundsWorkflow] });
    try {
      const { url: printed, port, token } = await wide.listen({ port: 0, host: "0.0.0.0" });
      const there = `http://${external}:${port}`;
      expect(printed).toBe(`http://0.0.0.0:${port}/#token=${token}`);
      const run = await parkedRun(store, "hb-remote", [{ order: "R1", amount: 900 }]);

      const page = await newPage();
      await page.goto(`${there}/#token=${token}&run=hb-remote`);
      const req = request(page, run.callIds[0]!);
      await expect.poll(() => req.count(), { timeout: 30_000 }).toBe(1);
      // The token left the address bar (a copied run link never carries it).
      expect(new URL(page.url()).hash).toBe("#run=hb-remote");
      expect(await page.getAttribute("[data-testid=conn]", "data-state")).toBe("open");
      await req.locator("[data-action=approve]").click();
      await expect.poll(() => req.getAttribute("data-decided")).toBe("approve");
      expect(await decisions("hb-remote")).toHaveLength(1);
      // A reload keeps the token for the tab.
      await page.reload();
      await expect.poll(() => request(page, run.callIds[0]!).getAttribute("data-decided"), { timeout: 30_000 }).toBe("approve");
      expect(page.errors).toEqual([]);
      await page.close();

      const stranger = await newPage();
      await stranger.goto(`${there}/#run=hb-remote`);
      await expect.poll(() => stranger.textContent("#notice"), { timeout: 30_000 }).toMatch(/needs its token/);
      expect(await request(stranger, run.callIds[0]!).count()).toBe(0);
      await stranger.close();
    } finally {
      await wide.close();
    }
  }, 120_000);
});
