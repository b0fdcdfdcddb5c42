/**
 * Headless Debian Chromium for browser tests, through playwright-core (which downloads nothing).
 * A missing browser fails the tests loudly: they are never skipped.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";

/**
 * The browser binary: $FORGE_CHROMIUM, else Debian's `chromium-headless-shell` (Chromium's
 * headless-only build, which Playwright itself uses for headless runs: the same Blink at about
 * half the CPU of the full browser, measured on the layout tests), else `chromium`.
 */
export function chromiumPath(): string {
  const configured = process.env.FORGE_CHROMIUM;
  if (configured) return configured;
  for (const name of ["chromium-headless-shell", "chromium"]) {
    try {
      return execFileSync("sh", ["-c", `command -v ${name}`], { encoding: "utf8" }).trim();
    } catch {
      // Not installed: try the next one.
    }
  }
  throw new Error("browser tests need Debian's chromium-headless-shell or chromium: apt-get install chromium-headless-shell (.ci/run installs it), or set FORGE_CHROMIUM to a Chromium binary");
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath(), args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"] });
}

/** Where screenshots are kept as test artifacts. */
export const ARTIFACTS = path.resolve("test-output/visualizer");

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const file = path.join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/** A page that keeps its uncaught errors and console errors, so a test can assert there were none. */
export type WatchedPage = Page & { errors: string[] };

/** A new page of `browser` at the given viewport, its errors collected in `page.errors`. */
export async function watchedPage(browser: Browser, width = 1400, height = 900): Promise<WatchedPage> {
  const page = (await browser.newPage({ viewport: { width, height } })) as WatchedPage;
  page.errors = [];
  page.on("pageerror", (e) => page.errors.push(e.message));
  page.on("console", (m) => m.type() === "error" && page.errors.push(m.text()));
  return page;
}
