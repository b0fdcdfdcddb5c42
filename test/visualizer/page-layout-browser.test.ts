/**
 * The page's layout on a desktop (1440×900) and a phone (390×844), in headless Debian Chromium,
 * with a store that holds a finished demo run and a newer run waiting for a person: the page
 * opens on the newest run, the chart fits its pane (on load and after a resize), nothing is
 * drawn over a state, no filter label is cut, the run's status reads the same in the run list
 * and the right pane, and the context diff shows times as times and JSON as JSON.
 * Screenshots land in test-output/visualizer/ (layout-*.png).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_APPROVAL_ABOVE_USD, supplierQuoteWorkflow } from "../../src/cli/demo-workflow.js";
import { FileRunStore } from "../../src/persistence/file-run-store.js";
import type { RunSummary } from "../../visualizer/protocol.js";
import { createVisualizer, type Visualizer } from "../../visualizer/server.js";
import { launchChromium, screenshot, watchedPage } from "../support/browser.js";
import { demoRun } from "./support/demo-run.js";
import { parkedRun, refundsWorkflow } from "./support/waiting-run.js";

let browser: Browser;
let viz: Visualizer;
let url: string;
let storeDir: string;
let doneId: string;
const WAITING = "refund-waiting";

beforeAll(async () => {
  storeDir = mkdtempSync(path.join(tmpdir(), "forge-viz-layout-"));
  doneId = await demoRun(storeDir);
  const store = new FileRunStore({ dir: storeDir });
  // Started after the demo run: the newest run in the store.
  await parkedRun(store, WAITING, [{ order: "A1", amount: 500 }]);
  const demo = supplierQuoteWorkflow({ approvalAboveUsd: DEMO_APPROVAL_ABOVE_USD }).workflow;
  viz = createVisualizer({ store, workflows: [demo, refundsWorkflow], version: "test" });
  ({ url } = await viz.listen({ port: 0 }));
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await viz?.close();
  rmSync(storeDir, { recursive: true, force: true });
});

interface Rect {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

/** What the page's geometry says: the chart against its pane, what covers a state, the filter fields' widths. */
function geometry(page: Page) {
  return page.evaluate(() => {
    const box = document.getElementById("graph-box")!;
    const svg = document.getElementById("graph")!;
    const rect = (e: Element): Rect => {
      const r = e.getBoundingClientRect();
      return { left: r.left, top: r.top, right: r.right, bottom: r.bottom };
    };
    const b = box.getBoundingClientRect();
    // The pane's inside: its border box less the border (and any scrollbar).
    const pane = { left: b.left + box.clientLeft, top: b.top + box.clientTop, right: b.left + box.clientLeft + box.clientWidth, bottom: b.top + box.clientTop + box.clientHeight };
    const meets = (a: Rect, c: Rect) => a.left < c.right && c.left < a.right && a.top < c.bottom && c.top < a.bottom;
    const states = [...svg.querySelectorAll("[data-state-id] > .box")].map(rect).filter((s) => meets(s, pane));
    // Every element shown on the page, other than the chart and what holds it, that lies over a state.
    const over = [...document.body.querySelectorAll("*")]
      .filter((e) => !svg.contains(e) && !e.contains(svg) && e.checkVisibility())
      .filter((e) => states.some((s) => meets(rect(e), s)))
      .map((e) => `${e.tagName.toLowerCase()}#${e.id}.${e.getAttribute("class") ?? ""}`);
    // A field's label is whole when the field is as wide as the same field sized to its content.
    const fields = [...document.querySelectorAll<HTMLInputElement | HTMLSelectElement>("[data-testid=run-filters] > *")].map((field) => {
      const probe = field.cloneNode(true) as HTMLInputElement | HTMLSelectElement;
      probe.style.cssText = "position: absolute; visibility: hidden; width: auto; min-width: 0; field-sizing: content;";
      field.parentElement!.append(probe);
      probe.value = field.value;
      const needs = probe.getBoundingClientRect().width;
      probe.remove();
      const label = field instanceof HTMLSelectElement ? (field.selectedOptions[0]?.text ?? "") : field.value || field.placeholder;
      return { name: field.getAttribute("data-testid"), label, needs, has: field.getBoundingClientRect().width };
    });
    return { pane, chart: rect(svg), states: states.length, over, fields, scrolls: box.scrollWidth > box.clientWidth || box.scrollHeight > box.clientHeight };
  });
}

/** The chart lies inside its pane and fills it in one direction (fitted, not merely small). */
async function expectFitted(page: Page) {
  await expect
    .poll(async () => {
      const { pane, chart, scrolls } = await geometry(page);
      const inside = chart.left >= pane.left - 1 && chart.top >= pane.top - 1 && chart.right <= pane.right + 1 && chart.bottom <= pane.bottom + 1;
      const fills = chart.right - chart.left >= pane.right - pane.left - 8 || chart.bottom - chart.top >= pane.bottom - pane.top - 8;
      return { inside, fills, scrolls };
    })
    .toEqual({ inside: true, fills: true, scrolls: false });
}

const selectedRun = (page: Page) => page.getAttribute(".run-item.selected", "data-run-id");

/** The run's status as the server, the run list and the right pane give it. */
async function statuses(page: Page, runId: string) {
  const runs = (await (await fetch(`${url}/api/runs`)).json()).runs as RunSummary[];
  return {
    server: runs.find((r) => r.runId === runId)?.status,
    list: await page.getAttribute(`[data-run-id="${runId}"]`, "data-status"),
    pane: await page.getAttribute("#status-line", "data-status"),
    text: (await page.textContent("#status-line"))?.split(" · ")[0],
  };
}

describe("the page's layout, in Chromium", () => {
  for (const [width, height, resized] of [
    [1440, 900, [1100, 700]],
    [390, 844, [844, 390]],
  ] as const) {
    it(`at ${width}×${height}: opens on the newest run, fits the chart, covers no state, cuts no filter label, one status`, async () => {
      const page = await watchedPage(browser, width, height);
      await page.goto(url);
      // The newest run, picked by the page (the address names none).
      await expect.poll(() => selectedRun(page), { timeout: 30_000 }).toBe(WAITING);
      expect(new URL(page.url()).hash).toBe("");
      await expect.poll(() => page.textContent("[data-testid=current-state]"), { timeout: 30_000 }).toBe("awaitingHuman");
      await expect.poll(() => page.locator("#graph [data-state-id]").count()).toBeGreaterThan(10);

      await expect.poll(() => statuses(page, WAITING)).toEqual({ server: "waiting", list: "waiting", pane: "waiting", text: "status waiting" });
      await expectFitted(page);
      const seen = await geometry(page);
      expect(seen.states).toBeGreaterThan(10);
      expect(seen.over).toEqual([]);
      for (const field of seen.fields) expect(field.has, `${field.name} "${field.label}" needs ${field.needs}px`).toBeGreaterThanOrEqual(field.needs - 0.5);
      expect(seen.fields.map((f) => f.label)).toEqual(["search runs", "any workflow", "any status", "session"]);
      await screenshot(page, `layout-${width}x${height}`);

      // The window changes size: the chart is fitted again.
      await page.setViewportSize({ width: resized[0], height: resized[1] });
      await expectFitted(page);
      expect((await geometry(page)).over).toEqual([]);
      await screenshot(page, `layout-${width}x${height}-resized-${resized[0]}x${resized[1]}`);
      expect(page.errors).toEqual([]);
      await page.close();
    }, 120_000);
  }

  it("opens the run the address names; its context diff shows times as times and JSON unescaped", async () => {
    const page = await watchedPage(browser, 1440, 900);
    await page.goto(`${url}/#run=${encodeURIComponent(doneId)}`);
    await expect.poll(() => selectedRun(page), { timeout: 30_000 }).toBe(doneId);
    await expect.poll(() => page.textContent("[data-testid=current-state]"), { timeout: 30_000 }).toBe("done");
    await expect.poll(() => statuses(page, doneId)).toEqual({ server: "done", list: "done", pane: "done", text: "status done" });

    // The first step that appended a tool result holding JSON (a lookup's answer).
    const step = await page.evaluate(() => {
      const steps = (window as unknown as { forgeViz: { steps: { n: number; context: { messages?: { role: string; content: unknown }[] } }[] } }).forgeViz.steps;
      return steps.find((s, i) => {
        const added = (s.context.messages ?? []).slice(steps[i - 1]?.context.messages?.length ?? Infinity);
        return added.some((m) => m.role === "tool" && typeof m.content === "string" && m.content.startsWith("{"));
      })?.n;
    });
    expect(step).toBeGreaterThan(1);
    await page.goto(`${url}/#run=${encodeURIComponent(doneId)}&step=${step}`);
    await expect.poll(() => page.getAttribute("[data-testid=context-diff]", "data-step")).toBe(String(step));
    const rows = page.locator("[data-testid=diff-row]");
    await expect.poll(() => rows.count()).toBeGreaterThan(0);
    const clock = /^\d{2}:\d{2}:\d{2}\.\d{3}$/;
    expect(await page.textContent('[data-testid=diff-row][data-path="now"] .before')).toMatch(clock);
    expect(await page.textContent('[data-testid=diff-row][data-path="now"] .after')).toMatch(clock);
    const message = (await page.locator('[data-testid=diff-row][data-kind=added][data-path^="messages["]').allInnerTexts()).join("\n");
    expect(message).toContain('"role":"tool","content":{"');
    for (const text of await rows.allInnerTexts()) expect(text).not.toContain('\\"');
    await screenshot(page, "layout-context-diff");
    expect(page.errors).toEqual([]);
    await page.close();
  }, 120_000);
});
