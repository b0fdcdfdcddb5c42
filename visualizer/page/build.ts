/**
 * The page's build: its TypeScript modules (src/) emitted as ES modules to js/, which the
 * server serves from memory beside index.html and app.css. `tsx visualizer/page/build.ts`
 * builds (`npm run build:page`, `npm run visualize`, the tests' globalSetup);
 * `tsx visualizer/page/build.ts <dir>` also copies the page as served into <dir> (`npm run build`).
 */
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));

/** The files a browser loads, besides js/: what `copyPage` ships. */
export const PAGE_FILES = ["index.html", "app.css"] as const;

/** Compiles the page; throws with tsc's output when it fails. */
export function buildPage(): void {
  // A fresh js/: a module deleted from src/ must not be served from an old build.
  rmSync(here("./js/"), { recursive: true, force: true });
  // typescript's `exports` hide bin/tsc: found beside its package.json (TypeScript 7 has no JS API).
  const tsc = path.join(path.dirname(createRequire(import.meta.url).resolve("typescript/package.json")), "bin", "tsc");
  try {
    execFileSync(process.execPath, [tsc, "-p", here("./tsconfig.json")], { stdio: ["ignore", "pipe", "pipe"] });
  } catch (error) {
    const e = error as { stdout?: Buffer; stderr?: Buffer };
    throw new Error(`visualizer page build failed:\n${e.stdout?.toString() ?? ""}${e.stderr?.toString() ?? ""}`);
  }
}

/** The built page (html, css, js/) copied into `dir`, as the server loads it. */
export function copyPage(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const name of PAGE_FILES) cpSync(here(`./${name}`), path.join(dir, name));
  cpSync(here("./js/"), path.join(dir, "js"), { recursive: true });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  buildPage();
  if (process.argv[2]) copyPage(path.resolve(process.argv[2]));
}
