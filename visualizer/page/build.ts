/**
 * The page's build: its TypeScript modules (src/) emitted as ES modules to js/, which the
 * server serves from memory beside index.html and app.css. `tsx visualizer/page/build.ts`
 * builds (`npm run build:page`, `npm run visualize`, the tests' globalSetup);
 * `tsx visualizer/page/build.ts <dir>` also copies the page as served into <dir> (`npm run build`).
 */
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));

/** The files a browser loads, besides js/: what `copyPage` ships. */
export const PAGE_FILES = ["index.html", "app.css"] as const;

/**
 * Compiles the page into a scratch folder, then brings js/ in line with it file by file: a
 * changed file is replaced by a rename (a reader sees the old file or the new one, never half of
 * either), an unchanged one is left alone and a module deleted from src/ is removed. So a build
 * never pulls js/ from under a server that is loading it (two suites in one checkout build it
 * side by side). Throws with tsc's output when it fails.
 */
export function buildPage(): void {
  const js = here("./js/");
  mkdirSync(js, { recursive: true });
  const scratch = mkdtempSync(path.join(js, "..", ".js-build-"));
  // typescript's `exports` hide bin/tsc: found beside its package.json (TypeScript 7 has no JS API).
  const tsc = path.join(path.dirname(createRequire(import.meta.url).resolve("typescript/package.json")), "bin", "tsc");
  try {
    execFileSync(process.execPath, [tsc, "-p", here("./tsconfig.json"), "--outDir", scratch], { stdio: ["ignore", "pipe", "pipe"] });
    const built = new Set(readdirSync(scratch, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".js")));
    for (const file of built) {
      const next = readFileSync(path.join(scratch, file));
      const target = path.join(js, file);
      if (existsSync(target) && readFileSync(target).equals(next)) continue;
      mkdirSync(path.dirname(target), { recursive: true });
      const temp = `${target}.${path.basename(scratch)}`;
      writeFileSync(temp, next);
      renameSync(temp, target);
    }
    for (const file of readdirSync(js, { recursive: true, encoding: "utf8" })) {
      if (file.endsWith(".js") && !built.has(file)) rmSync(path.join(js, file), { force: true });
    }
  } catch (error) {
    const e = error as { stdout?: Buffer; stderr?: Buffer };
    if (e.stdout === undefined && e.stderr === undefined) throw error;
    throw new Error(`visualizer page build failed:\n${e.stdout?.toString() ?? ""}${e.stderr?.toString() ?? ""}`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
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
