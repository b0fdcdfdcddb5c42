/**
 * What a person debugging runs reaches for, in headless Debian Chromium: distinct run ids,
 * run and timeline filters, deep links (#run=…&step=…) that reload to the same view, the
 * context diff of a step, two runs side by side, and the page on a phone (390×844) next to a
 * desktop (1440×900). Three demo runs are made by the demo CLI, as `npm start` makes them.
 * Screenshots land in test-output/visualizer/ (debug-*.png; docs-live-run.png is the README's).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_APPROVAL_ABOVE_USD, supplierQuoteWorkflow } from "../../src/cli/demo-workflow.js";
import { FileRunStore } from "../../src/persistence/file-run-store.js";
import { createVisualizer, type Visualizer } from "../../visualizer/server.js";
import { launchChromium, screenshot, watchedPage } from "../support/browser.js";
import { demoRun } from "./support/demo-run.js";

let browser: Browser;
let viz: Visualizer;
let url: string;
let storeDir: string;
const runIds: string[] = [];

beforeAll(async () => {
  storeDir = mkdtempSync(path.join(tmpdir(), "forge-viz-debug-"));
  for (let i = 0; i < 3; i++) runIds.push(await demoRun(storeDir));
  const workflow = supplierQuoteWorkflow({ approvalAboveUsd: DEMO_APPROVAL_ABOVE_USD }).workflow;
  viz = createVisualizer({ store: new FileRunStore({ dir: storeDir }), workflows: [workflow], version: "test" });
  ({ url } = await viz.listen({ port: 0 }));
  browser = await launchChromium();
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await viz?.close();
  rmSync(storeDir, { recursive: true, force: true });
});

const newPage = (width = 1440, height = 900) => watchedPage(browser, width, height);

const listedIds = (page: Page) => page.$$eval("[data-testid=run-item]", (items) => items.map((li) => [li.getAttribute("data-run-id"), li.querySelector("[data-testid=run-id]")?.textContent, li.getAttribute("title")]));
const diffStep = (page: Page) => page.getAttribute("[data-testid=context-diff]", "data-step");
const hashParams = (page: Page) => new URLSearchParams(new URL(page.url()).hash.slice(1));

describe("debugging runs in the page, in Chromium", () => {
  it("lists distinct run ids with their true iteration counts, and filters the runs (kept in the URL)", async () => {
    const page = await newPage();
    await page.goto(url);
    await expect.poll(async () => (await listedIds(page)).length, { timeout: 30_000 }).toBe(3);
    const listed = await listedIds(page);
    expect(new Set(listed.map(([, label]) => label)).size).toBe(3);
    for (const [id, label, title] of listed) {
      expect(title).toBe(id);
      expect(id!.endsWith(label!.replace(/^.*…/, ""))).toBe(true);
    }
    // The demo makes 5 model calls: the stored checkpoint's iteration, not 0.
    expect(await page.$$eval("[data-testid=run-item] .it", (its) => its.map((i) => i.textContent))).toEqual(["it 5", "it 5", "it 5"]);

    await page.fill("[data-testid=filter-text]", runIds[1]!);
    await expect.poll(async () => (await listedIds(page)).map(([id]) => id)).toEqual([runIds[1]]);
    expect(hashParams(page).get("q")).toBe(runIds[1]);
    await page.fill("[data-testid=filter-text]", "no such run");
    await expect.poll(async () => (await listedIds(page)).length).toBe(0);
    expect(await page.textContent("#runs-empty")).toContain("No run matches");
    await page.fill("[data-testid=filter-text]", "");
    // The choices are the statuses and workflows present.
    expect(await page.$$eval("[data-testid=filter-status] option", (os) => os.map((o) => o.getAttribute("value")))).toEqual(["", "done"]);
    await page.selectOption("[data-testid=filter-status]", "done");
    await page.selectOption("[data-testid=filter-workflow]", "supplier_quote");
    await page.reload();
    await expect.poll(async () => (await listedIds(page)).length, { timeout: 30_000 }).toBe(3);
    expect([await page.inputValue("[data-testid=filter-status]"), await page.inputValue("[data-testid=filter-workflow]")]).toEqual(["done", "supplier_quote"]);
    expect(hashParams(page).get("status")).toBe("done");
    expect(page.errors).toEqual([]);
    await page.close();
  }, 120_000);

  it("opens a step from its link, shows its context diff, steps on, and reloads to the same view", async () => {
    const id = runIds[0]!;
    const page = await newPage();
    await page.goto(`${url}/#run=${encodeURIComponent(id)}&step=4`);
    await expect.poll(() => diffStep(page), { timeout: 30_000 }).toBe("4");
    const steps = await page.evaluate(() => (window as unknown as { forgeViz: { steps: { n: number; pos: number }[] } }).forgeViz.steps);
    expect(Number(await page.inputValue("[data-testid=replay-slider]"))).toBe(steps[3]!.pos);
    expect(await page.textContent("[data-testid=step-pos]")).toBe(`step 4 / ${steps.length}`);
    expect(await page.locator("[data-testid=diff-row]").count()).toBeGreaterThan(0);

    await page.click("[data-testid=step-next]");
    await expect.poll(() => diffStep(page)).toBe("5");
    expect(hashParams(page).get("step")).toBe("5");
    const before = { state: await page.textContent("[data-testid=current-state]"), diff: await page.locator("[data-testid=diff-row]").allInnerTexts() };
    await page.reload();
    await expect.poll(() => diffStep(page), { timeout: 30_000 }).toBe("5");
    expect({ state: await page.textContent("[data-testid=current-state]"), diff: await page.locator("[data-testid=diff-row]").allInnerTexts() }).toEqual(before);

    // The step where the model's first answer came back: iteration went 0 → 1.
    const first = steps.findIndex((_, i) => i > 0) + 1;
    expect(first).toBeGreaterThan(0);
    await page.goto(`${url}/#run=${encodeURIComponent(id)}`);
    await expect.poll(() => page.locator("[data-testid=diff-row]").count(), { timeout: 30_000 }).toBeGreaterThan(0);
    const iterationStep = await page.evaluate(() => (window as unknown as { forgeViz: { steps: { n: number; iteration: number }[] } }).forgeViz.steps.find((s) => s.iteration === 1)!.n);
    await page.goto(`${url}/#run=${encodeURIComponent(id)}&step=${iterationStep}`);
    await expect.poll(() => page.getAttribute('[data-testid=diff-row][data-path="iteration"]', "data-kind"), { timeout: 30_000 }).toBe("changed");
    expect(await page.textContent('[data-testid=diff-row][data-path="iteration"]')).toContain("0→1");
    expect(page.errors).toEqual([]);
    await page.close();
  }, 120_000);

  it("filters the timeline by kind and text, and a click on an entry picks its step", async () => {
    const page = await newPage();
    await page.goto(`${url}/#run=${encodeURIComponent(runIds[0]!)}`);
    const entries = page.locator("[data-testid=timeline] .entry");
    await expect.poll(() => entries.count(), { timeout: 30_000 }).toBeGreaterThan(5);
    const visible = () => page.$$eval("[data-testid=timeline] .entry", (es) => es.filter((e) => !(e as HTMLElement).hidden).map((e) => e.getAttribute("data-kind")));
    await page.click("[data-testid=timeline-kinds] [data-kind=tool_result]");
    await expect.poll(async () => (await visible()).includes("tool_result")).toBe(false);
    expect(hashParams(page).get("hide")).toBe("tool_result");
    await page.fill("[data-testid=timeline-find]", "get_public_pricing");
    await expect.poll(async () => (await visible()).every((k) => k !== "tool_result")).toBe(true);
    expect((await visible()).length).toBeGreaterThan(0);
    await page.reload();
    await expect.poll(async () => (await visible()).length, { timeout: 30_000 }).toBeGreaterThan(0);
    expect(await page.inputValue("[data-testid=timeline-find]")).toBe("get_public_pricing");
    expect((await visible()).includes("tool_result")).toBe(false);

    const rescue = page.locator("[data-testid=timeline] .entry[data-kind=rescue]");
    const iteration = Number(await rescue.getAttribute("data-iteration"));
    await rescue.click();
    await expect.poll(() => hashParams(page).get("step")).not.toBeNull();
    const steps = await page.evaluate(() => (window as unknown as { forgeViz: { steps: { n: number; iteration: number }[] } }).forgeViz.steps);
    expect(Number(await diffStep(page))).toBe(steps.filter((s) => s.iteration === iteration).at(-1)!.n);
    expect(page.errors).toEqual([]);
    await page.close();
  }, 120_000);

  it("shows two runs side by side from a link, and leaves the view from its button", async () => {
    const [a, b] = runIds as [string, string];
    const page = await newPage();
    await page.goto(`${url}/#run=${encodeURIComponent(a)}&compare=${encodeURIComponent(b)}`);
    const cols = page.locator("[data-testid=compare-col]");
    await expect.poll(() => cols.count(), { timeout: 30_000 }).toBe(2);
    expect(await cols.evaluateAll((cs) => cs.map((c) => c.getAttribute("data-run-id")))).toEqual([a, b]);
    // Each status is the run list's, which may arrive after the runs' replays.
    await expect.poll(() => page.locator("[data-testid=compare-summary]").allInnerTexts(), { timeout: 30_000 }).toEqual([expect.stringMatching(/^done · done · \d+ steps$/), expect.stringMatching(/^done · done · \d+ steps$/)]);
    expect(await page.isVisible("#graph-box")).toBe(false);
    expect(await page.textContent("[data-testid=compare-diff]")).toMatch(/final contexts: \d+ differences/);
    await screenshot(page, "debug-compare-1440");
    await page.click("[data-testid=compare-close]");
    await expect.poll(() => page.isVisible("#graph-box")).toBe(true);
    expect(hashParams(page).get("compare")).toBeNull();
    expect(page.errors).toEqual([]);
    await page.close();
  }, 120_000);

  it("stacks the panes on a phone with the whole chart in its box (scrolling once zoomed in); a desktop keeps three columns", async () => {
    const link = `${url}/#run=${encodeURIComponent(runIds[2]!)}&step=9`;
    for (const [width, height, name] of [[390, 844, "phone"], [1440, 900, "desktop"]] as const) {
      const page = await newPage(width, height);
      await page.goto(link);
      await expect.poll(() => diffStep(page), { timeout: 30_000 }).toBe("9");
      await expect.poll(() => page.locator("#graph [data-state-id]").count()).toBeGreaterThan(10);
      const box = (sel: string) => page.locator(sel).boundingBox().then((b) => b!);
      const [runs, centre, panels, graph] = await Promise.all([box(".runs"), box(".centre"), box(".panels"), box("#graph-box")]);
      if (name === "phone") {
        // One column: each pane below the last, none wider than the screen.
        expect(centre.y).toBeGreaterThanOrEqual(runs.y + runs.height - 1);
        expect(panels.y).toBeGreaterThanOrEqual(centre.y + centre.height - 1);
        for (const b of [runs, centre, panels]) expect(b.x + b.width).toBeLessThanOrEqual(width + 1);
        expect(graph.width).toBeGreaterThan(300);
        expect(graph.height).toBeGreaterThan(300);
        // The whole chart fits its box; zoomed in, it scrolls; Fit brings it back.
        const scrollable = () => page.$eval("#graph-box", (g) => g.scrollWidth > g.clientWidth || g.scrollHeight > g.clientHeight);
        const svgWidth = () => page.$eval("#graph", (s) => (s as unknown as HTMLElement).getBoundingClientRect().width);
        expect(await scrollable()).toBe(false);
        expect(await svgWidth()).toBeLessThanOrEqual(graph.width);
        for (let i = 0; i < 4; i++) await page.click("#zoom-in");
        expect(await scrollable()).toBe(true);
        await page.click("#zoom-fit");
        expect(await scrollable()).toBe(false);
        expect(await svgWidth()).toBeLessThanOrEqual(graph.width);
      } else {
        expect(centre.x).toBeGreaterThanOrEqual(runs.x + runs.width - 1);
        expect(panels.x).toBeGreaterThanOrEqual(centre.x + centre.width - 1);
      }
      await screenshot(page, `debug-${name}-${width}`);
      if (name === "desktop") await page.screenshot({ path: "test-output/visualizer/docs-live-run.png" });
      expect(page.errors).toEqual([]);
      await page.close();
    }
  }, 120_000);
});
