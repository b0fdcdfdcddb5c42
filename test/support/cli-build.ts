/**
 * The sources a spawned CLI runs, transpiled to plain JavaScript once before the tests (the
 * globalSetup calls `buildCliSources`). `node --import tsx src/cli/main.ts` spends about 2 s of
 * CPU in tsx's loader hooks for every spawn; the same modules as .js start in well under one.
 * Transpiled file by file (not bundled) with the repo's layout under CLI_BUILD_DIR, so paths the
 * code resolves against its own file, bare imports (the repo's node_modules, one level up) and
 * a module's identity (`isMainModule`, a workflow's path) behave as in a checkout.
 */
import { createHash, randomUUID } from "node:crypto";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { copyPage } from "../../visualizer/page/build.js";

/** The repository root: the tests' working directory. */
export const REPO_ROOT = path.resolve(fileURLToPath(new URL("../..", import.meta.url)));

/**
 * Where the builds live: `<REPO_ROOT>/<CLI_BUILD_ROOT>/<key>/src/cli/main.js` for src/cli/main.ts,
 * the key naming the Node major (the build targets it) and a hash of every input. A build is
 * never rewritten in place: two suites in one checkout (CI's Node lines, a watch beside a run)
 * each spawn the build their own sources made, and an unchanged tree is not built again.
 */
export const CLI_BUILD_ROOT = "test-output/cli-js";

declare module "vitest" {
  export interface ProvidedContext {
    /** The repo-relative folder of this run's CLI build (the globalSetup provides it). */
    forgeCliBuild: string;
  }
}

/**
 * The folders transpiled. Under test/, every module but the tests themselves: the fixture
 * workflows a CLI test passes import test/support and test/clients/support helpers.
 */
const ROOTS = ["src", "machines", "eval", "visualizer", "test"] as const;

/** The browser page (its own build, copied below) and what no spawned CLI ever loads. */
const SKIPPED = [/^visualizer\/page\//, /\.test\.ts$/, /\.test-d\.ts$/, /\.d\.ts$/];

/** Whether the build holds a twin of this repo-relative, `/`-separated path. */
export function isTranspiled(relPath: string): boolean {
  return relPath.endsWith(".ts") && ROOTS.some((root) => relPath.startsWith(`${root}/`)) && !SKIPPED.some((re) => re.test(relPath));
}

function sources(): string[] {
  return ROOTS.flatMap((root) =>
    readdirSync(path.join(REPO_ROOT, root), { recursive: true, encoding: "utf8" })
      .map((f) => `${root}/${f.split(path.sep).join("/")}`)
      .filter(isTranspiled),
  );
}

/**
 * The package.json the built src/cli/main.js and src/telemetry/tracer.js read two levels up:
 * name and version as in the repo, and `exports` pointing at the built twins (not dist/), so
 * a module importing "forge-ts" by name resolves inside the build as it does in a checkout.
 */
function builtPackageJson(out: string): void {
  const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as Record<string, unknown>;
  const exports = Object.fromEntries(
    Object.entries(pkg.exports as Record<string, string | { import: string }>).map(([key, target]) => [
      key,
      typeof target === "string" ? target : target.import.replace(/^\.\/dist\//, "./"),
    ]),
  );
  writeFileSync(path.join(out, "package.json"), `${JSON.stringify({ name: pkg.name, version: pkg.version, type: pkg.type, exports }, null, 2)}\n`);
}

/** Builds older than this, other than the one in use, are removed. */
const STALE_MS = 60 * 60 * 1000;

/** Node major and a hash of every file a build is made from (the page's build included). */
function buildKey(): string {
  const hash = createHash("sha256");
  const page = path.join("visualizer", "page");
  const pageFiles = ["index.html", "app.css", ...readdirSync(path.join(REPO_ROOT, page, "js")).map((f) => `js/${f}`)].map((f) => `${page}/${f}`);
  const configs = readdirSync(path.join(REPO_ROOT, "eval", "configs"), { recursive: true, encoding: "utf8" }).map((f) => `eval/configs/${f}`);
  for (const rel of [...sources(), ...pageFiles, ...configs, "package.json", "tsconfig.json"].sort()) {
    const file = path.join(REPO_ROOT, rel);
    if (!statSync(file).isFile()) continue;
    hash.update(rel).update("\0").update(readFileSync(file)).update("\0");
  }
  return `node${process.versions.node.split(".")[0]}-${hash.digest("hex").slice(0, 16)}`;
}

/**
 * The build of the tree as it is now: made in a scratch folder and renamed into place whole,
 * or the one already there. Returns its repo-relative folder. Call after `buildPage()`: the
 * built visualizer serves the page from `./page/` beside it.
 */
export async function buildCliSources(): Promise<string> {
  const root = path.join(REPO_ROOT, CLI_BUILD_ROOT);
  mkdirSync(root, { recursive: true });
  const key = buildKey();
  const dir = path.join(root, key);
  const now = new Date();
  for (const name of readdirSync(root)) {
    if (name === key) continue;
    const other = path.join(root, name);
    if (now.getTime() - statSync(other).mtimeMs > STALE_MS) rmSync(other, { recursive: true, force: true });
  }
  if (existsSync(dir)) {
    utimesSync(dir, now, now); // in use: not stale
    return `${CLI_BUILD_ROOT}/${key}`;
  }
  const out = path.join(root, `.tmp-${key}-${randomUUID()}`);
  mkdirSync(out, { recursive: true });
  try {
    await build({
      absWorkingDir: REPO_ROOT,
      entryPoints: sources(),
      outdir: out,
      outbase: ".",
      bundle: false,
      format: "esm",
      platform: "node",
      target: `node${process.versions.node.split(".")[0]}`,
      tsconfig: "tsconfig.json",
      logLevel: "error",
    });
    builtPackageJson(out);
    copyPage(path.join(out, "visualizer", "page"));
    // eval/batch.ts reads its named configs from `./configs` beside itself.
    cpSync(path.join(REPO_ROOT, "eval", "configs"), path.join(out, "eval", "configs"), { recursive: true });
    renameSync(out, dir);
  } catch (error) {
    // Another run renamed the same build into place first: theirs is this one.
    if (!existsSync(dir)) throw error;
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
  return `${CLI_BUILD_ROOT}/${key}`;
}
