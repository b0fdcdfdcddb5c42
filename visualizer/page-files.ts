/**
 * The page's files as the server serves them: index.html and app.css from page/, its modules
 * from page/js/, which page/build.ts emits from page/src/. The package ships them built
 * (`npm run build` copies them to dist/visualizer/page/); a checkout builds them
 * (`buildPageInCheckout`, which `forge-ts visualize` calls, or `npm run build:page`).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";

const PAGE_DIR = new URL("./page/", import.meta.url);

const PAGE_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
};

export type PageFiles = Map<string, { body: Uint8Array; type: string }>;

/**
 * In a checkout (page/build.ts sits beside the page), builds the page from page/src/ and
 * returns true; in the package (the page only, built) returns false. It builds on every call,
 * not only when js/ is missing: a page older than its sources is never served, and two first
 * starts at once never read a js/ the other is still filling (each reads after its own build,
 * which renames every file into place). An unchanged file is left as it is.
 */
export async function buildPageInCheckout(): Promise<boolean> {
  const script = new URL("build.ts", PAGE_DIR);
  if (!existsSync(script)) return false;
  // A checkout runs its sources through a TypeScript loader (tsx), which imports build.ts too.
  const { buildPage } = (await import(script.href)) as typeof import("./page/build.js");
  buildPage();
  return true;
}

/** The page's files, read once: served from memory, and their total is the page weight. */
export function loadPage(): PageFiles {
  const files: PageFiles = new Map();
  const add = (sub: string) => {
    for (const name of readdirSync(new URL(sub, PAGE_DIR))) {
      const type = PAGE_TYPES[name.slice(name.lastIndexOf("."))];
      if (type) files.set(`${sub}${name}`, { body: readFileSync(new URL(`${sub}${name}`, PAGE_DIR)), type });
    }
  };
  add("");
  if (!files.has("index.html")) throw new Error(`visualizer page missing: no index.html in ${PAGE_DIR.pathname}`);
  if (!existsSync(new URL("js/app.js", PAGE_DIR))) {
    throw new Error(`visualizer page not built: no js/app.js in ${PAGE_DIR.pathname} (run npm run build:page, or start it with forge-ts visualize, which builds it)`);
  }
  add("js/");
  return files;
}
