/**
 * Child runs in the page, in headless Debian Chromium: a planner run whose research tool ran a
 * child run (workflowTool), streamed live through visualizerInspector and kept in the store.
 * The run list nests the child under its parent with the call id; opening the child names its
 * parent (a link back), and the parent lists the child. Screenshots land in test-output/visualizer/.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemoryRunStore } from "../../src/persistence/memory-run-store.js";
import { parentLinkOf } from "../../src/runner/child-links.js";
import { visualizerInspector } from "../../visualizer/inspector.js";
import { createVisualizer, type Visualizer } from "../../visualizer/server.js";
import type { Browser, Page } from "playwright-core";
import { launchChromium, screenshot, watchedPage } from "../support/browser.js";
import { plannerWorkflow, researchWorkflow, runPlanner } from "./support/child-run.js";

let browser: Browser;
let viz: Visualizer;
let url: string;
const store = new MemoryRunStore();

beforeAll(async () => {
  viz = createVisualizer({ store, workflows: [plannerWorkflow, researchWorkflow], version: "test" });
  ({ url } = await viz.listen({ port: 0 }));
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await viz?.close();
});

const newPage = () => watchedPage(browser);

const listed = (page: Page) =>
  page.$$eval("[data-testid=run-item]", (items) => items.map((li) => [li.getAttribute("data-run-id"), li.getAttribute("data-depth"), li.getAttribute("data-parent-run-id")]));

describe("child runs in the page, in Chromium", () => {
  it("lists the child under its parent with its call; the child links back to the parent, the parent to the child", async () => {
    await runPlanner("solo", { store });
    const inspector = visualizerInspector(url);
    await runPlanner("plan", { store, inspect: inspector });
    await inspector.flush();
    const callId = parentLinkOf(await store.events("plan.1-0"))!.callId;

    const page = await newPage();
    await page.goto(`${url}/#run=plan`);
    await expect.poll(() => listed(page), { timeout: 30_000 }).toEqual([
      ["plan", "0", null],
      ["plan.1-0", "1", "plan"],
      ["solo", "0", null],
      ["solo.1-0", "1", "solo"],
    ]);
    const child = page.locator(`[data-run-id="plan.1-0"]`);
    const parent = page.locator(`[data-run-id="plan"]`);
    expect(await child.locator("[data-testid=run-call]").innerText()).toBe(`↳ call ${callId}`);
    // Indented: the child's id starts to the right of its parent's.
    const x = async (item: typeof child) => (await item.locator(".rid").boundingBox())!.x;
    expect(await x(child)).toBeGreaterThan((await x(parent)) + 8);
    // Each run's iteration as stored (not "it 0").
    expect(await parent.locator(".it").innerText()).toBe("it 2");
    expect(await child.locator(".it").innerText()).toBe("it 2");

    // The parent lists its child, with the call.
    const toChild = page.locator("[data-testid=lineage-child]");
    await expect.poll(() => toChild.count(), { timeout: 30_000 }).toBe(1);
    expect(await toChild.getAttribute("data-call-id")).toBe(callId);
    expect(await page.locator("[data-testid=lineage-parent]").count()).toBe(0);
    // Stepped back to while the research call ran: the call in the batch links to its child.
    await expect.poll(() => page.locator("[data-testid=replay-slider]").isVisible(), { timeout: 30_000 }).toBe(true);
    const at = await page.evaluate(() => {
      const slider = document.querySelector<HTMLInputElement>("[data-testid=replay-slider]")!;
      for (let i = 0; i <= Number(slider.max); i++) {
        slider.value = String(i);
        slider.dispatchEvent(new Event("input"));
        if (document.querySelector("[data-testid=batch-child]")) return i;
      }
      return -1;
    });
    expect(at).toBeGreaterThan(0);
    const batchChild = page.locator("[data-testid=batch] [data-tool=research] [data-testid=batch-child]");
    expect(await batchChild.innerText()).toBe("child run plan.1-0 →");
    await screenshot(page, "child-runs-parent");

    // The child, picked in the list: names its parent and the call, and links back.
    await child.click();
    const toParent = page.locator("[data-testid=lineage-parent]");
    await expect.poll(() => toParent.count(), { timeout: 30_000 }).toBe(1);
    expect(await toParent.innerText()).toBe(`child of plan · call ${callId}`);
    expect(new URL(page.url()).hash).toBe("#run=plan.1-0");
    await expect.poll(() => page.textContent("[data-testid=current-state]"), { timeout: 30_000 }).toBe("done");
    expect(await page.getAttribute(`[data-run-id="plan.1-0"]`, "class")).toContain("selected");
    await screenshot(page, "child-runs-child");

    await toParent.locator("a").click();
    await expect.poll(() => new URL(page.url()).hash).toBe("#run=plan");
    await expect.poll(() => page.getAttribute(`[data-run-id="plan"]`, "class")).toContain("selected");
    await expect.poll(() => toChild.count()).toBe(1);
    // And from the parent's child link to the child again.
    await toChild.locator("a").click();
    await expect.poll(() => new URL(page.url()).hash).toBe("#run=plan.1-0");
    await expect.poll(() => page.getAttribute(`[data-run-id="plan.1-0"]`, "class")).toContain("selected");
    expect(page.errors).toEqual([]);
    await page.close();
  }, 120_000);
});
