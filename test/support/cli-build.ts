/**
 * The sources a spawned CLI runs, transpiled to plain JavaScript once before the tests (the
 * globalSetup calls `buildCliSources`). `node --import tsx src/cli/main.ts` spends about 2 s of
 * CPU in tsx's loader hooks for every spawn; the same modules as .js start in well under one.
 * Transpiled file by file (not bundled) with the repo's layout under CLI_BUILD_DIR, so paths the
 * code resolves against its own file, bare imports (the repo's node_modules, one level up) and
 * a module's identity (`isMainModule`, a workflow's path) behave as in a checkout.
 */
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { copyPage } from "../../visualizer/page/build.js";

/** The repository root: the tests' working directory. */
export const REPO_ROOT = path.resolve(fileURLToPath(new URL("../..", import.meta.url)));

/**
 * Where the transpiled twins live: `<REPO_ROOT>/<CLI_BUILD_DIR>/src/cli/main.js` for src/cli/main.ts.
 * One folder per Node major (the build targets it), so two Node lines' suites can run side by
 * side in one checkout (CI does) without one's globalSetup rebuilding under the other's spawns.
 */
export const CLI_BUILD_DIR = `test-output/cli-js/node${process.versions.node.split(".")[0]}`;

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

/**
 * Builds CLI_BUILD_DIR from scratch (a module deleted from the sources must not linger there).
 * Call after `buildPage()`: the built visualizer serves the page from `./page/` beside it.
 */
export async function buildCliSources(): Promise<void> {
  const out = path.join(REPO_ROOT, CLI_BUILD_DIR);
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
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
}
