/**
 * The visualizer in headless Debian Chromium (playwright-core): the real page, the real server,
 * and the demo started as `npm start -- --visualize` would start it, in its own process.
 * Each test leaves a screenshot in test-output/visualizer/.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import net, { type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_APPROVAL_ABOVE_USD, supplierQuoteWorkflow } from "../../src/cli/demo-workflow.js";
import { FileRunStore } from "../../src/persistence/file-run-store.js";
import type { GraphLayout } from "../../visualizer/protocol.js";
import { createVisualizer, type Visualizer } from "../../visualizer/server.js";
import { launchChromium, screenshot, watchedPage, type WatchedPage } from "../support/browser.js";
import { cliArgs } from "../support/cli.js";

let browser: Browser;
let viz: Visualizer;
let url: string;
let storeDir: string;
let leaves: Set<string>;

beforeAll(async () => {
  storeDir = mkdtempSync(path.join(tmpdir(), "forge-viz-"));
  // The workflow as the demo runs it (DEMO_APPROVAL_ABOVE_USD in src/cli/demo.ts): its quote
  // waits for an approval, so a replay re-drives the same wait and decision.
  const workflow = supplierQuoteWorkflow({ approvalAboveUsd: DEMO_APPROVAL_ABOVE_USD }).workflow;
  viz = createVisualizer({ store: new FileRunStore({ dir: storeDir }), workflows: [workflow], version: "test" });
  ({ url } = await viz.listen({ port: 0 }));
  browser = await launchChromium();
  const layout = (await (await fetch(`${url}/api/graph`)).json()) as GraphLayout;
  leaves = new Set(layout.nodes.filter((n) => n.kind !== "compound" && n.kind !== "any").map((n) => n.id));
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await viz?.close();
  rmSync(storeDir, { recursive: true, force: true });
});

/** The demo CLI in a child process, streaming to `visualizerUrl`; resolves with its output. */
function demo(visualizerUrl: string, latencyMs: number): Promise<{ code: number | null; stdout: string; stderr: string; runId: string }> {
  const child = spawn(
    process.execPath,
    cliArgs("src/cli/demo.ts", "--visualize", "--visualizer-url", visualizerUrl, "--latency", String(latencyMs), "--store", storeDir),
    { env: { ...process.env, NO_COLOR: "1" } },
  );
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr, runId: /stored\s+run (\S+)/.exec(stdout)?.[1] ?? "" }));
  });
}

/** States the demo printed ("→ state" lines), as the layout names them. */
const printedStates = (stdout: string) => [...stdout.matchAll(/^→ (\S+)$/gm)].map((m) => `workflow.${m[1]}`);

/**
 * Records every class change of statechart nodes and every value of the iteration counter, from
 * page load on: MutationObserver records keep each change even when several land in one task.
 */
async function recordPage(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const w = window as unknown as { __records: { kind: string; id: string; value: string }[] };
    w.__records = [];
    const pending = new Map<Element, MutationRecord[]>();
    new MutationObserver((records) => {
      // A record has the old value only: an element's new value is the next record's old value.
      for (const r of records) pending.set(r.target as Element, [...(pending.get(r.target as Element) ?? []), r]);
      for (const [el, list] of pending) {
        list.forEach((r, i) => {
          const next = list[i + 1]?.oldValue ?? el.getAttribute(r.attributeName!) ?? "";
          if (r.attributeName === "class" && el.hasAttribute("data-state-id")) {
            const was = (r.oldValue ?? "").split(/\s+/).includes("active");
            const is = next.split(/\s+/).includes("active");
            if (!was && is) w.__records.push({ kind: "active", id: el.getAttribute("data-state-id")!, value: "" });
          }
          if (r.attributeName === "data-value" && el.getAttribute("data-testid") === "counter-iterations") w.__records.push({ kind: "iterations", id: "", value: next });
        });
      }
      pending.clear();
    }).observe(document, { subtree: true, attributes: true, attributeOldValue: true, attributeFilter: ["class", "data-value"] });
  });
}

const records = (page: Page) => page.evaluate(() => (window as unknown as { __records: { kind: string; id: string; value: string }[] }).__records);
const dedupe = (xs: string[]) => xs.filter((x, i) => x !== xs[i - 1]);

/** Everything a person reads off the page for a run, for comparing two views of it. */
async function finalView(page: Page) {
  return page.evaluate(() => {
    const text = (sel: string) => (document.querySelector(sel) as HTMLElement | null)?.innerText.trim() ?? "";
    const counters = Object.fromEntries(
      [...document.querySelectorAll("[data-testid^=counter-]")].map((el) => [el.getAttribute("data-testid"), `${el.getAttribute("data-value")}/${el.getAttribute("data-max")}`]),
    );
    const edges = Object.fromEntries([...document.querySelectorAll("[data-edge-key]")].map((el) => [el.getAttribute("data-edge-key"), el.getAttribute("data-count")]));
    const steps = Object.fromEntries([...document.querySelectorAll("[data-testid=steps] [data-step]")].map((el) => [el.getAttribute("data-step"), el.getAttribute("data-done")]));
    const timeline = [...document.querySelectorAll("[data-testid=timeline] [data-kind]")].map((el) => `${el.getAttribute("data-kind")}#${el.getAttribute("data-iteration")}: ${(el as HTMLElement).innerText.trim()}`);
    const active = [...document.querySelectorAll("[data-state-id].active")].map((el) => el.getAttribute("data-state-id")).sort();
    return { state: text("[data-testid=current-state]"), counters, edges, steps, timeline, active };
  });
}

const newPage = () => watchedPage(browser);
const pageErrors = (page: Page) => (page as WatchedPage).errors;

/** A TCP relay between the browser and the server whose connections the test can cut. */
async function relay(targetPort: number) {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, "127.0.0.1");
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("error", end);
      s.on("close", end);
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    cut: () => sockets.forEach((s) => s.destroy()),
    close: () => new Promise<void>((resolve) => (sockets.forEach((s) => s.destroy()), server.close(() => resolve()))),
  };
}

describe("the visualizer in Chromium", () => {
  let liveRunId = "";
  let liveView: Awaited<ReturnType<typeof finalView>>;

  it("follows a live demo run: each state highlighted in order, rescue and step nudge in the timeline, counters moving", async () => {
    const page = await newPage();
    await recordPage(page);
    await page.goto(url);
    await expect.poll(() => page.getAttribute("[data-testid=conn]", "data-state")).toBe("open");
    const run = await demo(url, 150);
    expect(run.code, run.stderr).toBe(0);
    liveRunId = run.runId;
    await expect.poll(() => page.textContent("[data-testid=current-state]"), { timeout: 30_000 }).toBe("done");

    // The page lit every state the run went through, in the order the process printed them.
    const lit = dedupe((await records(page)).filter((r) => r.kind === "active" && leaves.has(r.id)).map((r) => r.id));
    expect(lit).toEqual(dedupe(printedStates(run.stdout)));
    // The iteration counter moved through every value up to the run's 5 model calls.
    const iterations = dedupe((await records(page)).filter((r) => r.kind === "iterations").map((r) => r.value));
    expect(iterations.filter((v) => v !== "0")).toEqual(["1", "2", "3", "4", "5"]);
    expect(await page.getAttribute("[data-testid=counter-iterations]", "data-max")).toBe("12");

    const rescue = page.locator("[data-testid=timeline] [data-kind=rescue]");
    await expect.poll(() => rescue.count()).toBe(1);
    expect(await rescue.innerText()).toContain("get_public_pricing[ARGS]");
    expect(await page.locator("[data-testid=timeline] [data-kind=step_nudge]").count()).toBe(1);
    for (const step of ["lookup_part", "get_public_pricing", "check_inventory", "get_supplier_history"]) {
      expect(await page.getAttribute(`[data-testid=steps] [data-step=${step}]`, "data-done")).toBe("true");
    }
    expect(await page.getAttribute(`[data-run-id="${liveRunId}"]`, "data-status")).toBe("done");
    liveView = await finalView(page);
    expect(Object.values(liveView.edges).some((n) => Number(n) > 1)).toBe(true);
    await screenshot(page, "live-run");
    expect(pageErrors(page)).toEqual([]);
    await page.close();
  }, 120_000);

  it("replays the stored run to the same final view, and steps back through it", async () => {
    expect(liveRunId).not.toBe("");
    const page = await newPage();
    await page.goto(`${url}/#run=${liveRunId}`);
    const slider = page.locator("[data-testid=replay-slider]");
    await expect.poll(() => slider.count(), { timeout: 30_000 }).toBe(1);
    await expect.poll(() => page.textContent("[data-testid=current-state]")).toBe("done");
    expect(await finalView(page)).toEqual(liveView);
    await screenshot(page, "replay-end");

    // Back to an early point: fewer steps done, an earlier state; its snapshot copies as JSON.
    const max = Number(await slider.getAttribute("max"));
    await slider.fill(String(Math.floor(max / 4)));
    await expect.poll(() => page.textContent("[data-testid=current-state]")).not.toBe("done");
    const early = await finalView(page);
    expect(Object.values(early.steps).filter((d) => d === "true").length).toBeLessThan(4);
    await page.click("[data-testid=copy-snapshot]");
    const json = JSON.parse((await page.textContent("[data-testid=snapshot-json]")) ?? "") as { value: unknown; context: { run: { id: string }; iteration: number } };
    expect(json.context.run.id).toBe(liveRunId);
    expect(json.context.iteration).toBeLessThan(5);
    await screenshot(page, "replay-early");
    expect(pageErrors(page)).toEqual([]);
    await page.close();
  }, 120_000);

  it("loses no event when the browser's connection drops mid-run", async () => {
    const cutter = await relay(Number(new URL(url).port));
    const page = await newPage();
    await page.goto(cutter.url);
    await expect.poll(() => page.getAttribute("[data-testid=conn]", "data-state")).toBe("open");
    const running = demo(url, 400);
    // The page opened on the newest stored run; it takes up the live one, and sees it move.
    const liveAt = async () => ((await page.locator(".mode.on").count()) ? Number(await page.getAttribute("[data-testid=counter-iterations]", "data-value")) : -1);
    await expect.poll(liveAt, { timeout: 30_000 }).toBeGreaterThanOrEqual(2);
    cutter.cut();
    await expect.poll(() => page.getAttribute("[data-testid=conn]", "data-state")).not.toBe("open");
    const run = await running;
    expect(run.code, run.stderr).toBe(0);
    await expect.poll(() => page.textContent("[data-testid=current-state]"), { timeout: 30_000 }).toBe("done");
    await expect.poll(() => page.getAttribute("[data-testid=conn]", "data-state")).toBe("open");
    const reconnected = await finalView(page);
    // Every transition the server saw was counted on the page: no event went missing.
    const transitions = viz.feed.since(run.runId).events.reduce((n, e) => n + (e.type === "@xstate.microstep" ? e.transitions.length : 0), 0);
    expect(Object.values(reconnected.edges).reduce((n: number, c) => n + Number(c), 0)).toBe(transitions);
    await screenshot(page, "reconnected");
    // And it reads the same as the run replayed from the store in a fresh page.
    const fresh = await newPage();
    await fresh.goto(`${url}/#run=${run.runId}`);
    await expect.poll(() => fresh.locator("[data-testid=replay-slider]").count(), { timeout: 30_000 }).toBe(1);
    await expect.poll(() => fresh.textContent("[data-testid=current-state]")).toBe("done");
    expect(await finalView(fresh)).toEqual(reconnected);
    expect(pageErrors(page).filter((e) => !/ERR_CONNECTION|net::|EventSource/i.test(e))).toEqual([]);
    await Promise.all([page.close(), fresh.close(), cutter.close()]);
  }, 120_000);
});
