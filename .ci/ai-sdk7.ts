/**
 * AI SDK 7 — `ai` 7, @ai-sdk/openai-compatible 3, @ai-sdk/anthropic 4 and @ai-sdk/provider 4,
 * under the aliases ai-v7, @ai-sdk/openai-compatible-v3, @ai-sdk/anthropic-v4 beside the
 * project's AI SDK 6 — needs Node >= 22, and npm on Node 20 prints an EBADENGINE warning for each
 * of its packages. So it is not in the project's install: it has a package of its own,
 * .ci/ai-sdk7, installed there by a Node >= 22 (this one, or the pinned Node 24), and
 * tsconfig.json `paths` map its names there, for tsc (the type-check, the build, the docs'
 * checks: forge-ts/ai-sdk compiles against @ai-sdk/provider 4's types), vitest and tsx (the
 * tests and the bench that run it, on Node >= 22 only).
 *
 * `npm run typecheck`, `npm run build` and the tests' globalSetup run this first; it installs
 * only when .ci/ai-sdk7/node_modules does not hold what .ci/ai-sdk7/package-lock.json pins.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { ensureNode22, node22Env, ROOT } from "./node22.js";

const DIR = path.join(ROOT, ".ci/ai-sdk7");

/** The packages the lock file pins at the top of .ci/ai-sdk7/node_modules that are not there at that version. */
function missing(): string[] {
  const lock = JSON.parse(readFileSync(path.join(DIR, "package-lock.json"), "utf8")) as { packages: Record<string, { version?: string }> };
  return Object.entries(lock.packages)
    .filter(([key]) => /^node_modules\/(@[^/]+\/)?[^/]+$/.test(key))
    .filter(([key, { version }]) => {
      const manifest = path.join(DIR, key, "package.json");
      return !existsSync(manifest) || (JSON.parse(readFileSync(manifest, "utf8")) as { version?: string }).version !== version;
    })
    .map(([key]) => key.slice("node_modules/".length));
}

/**
 * Installs .ci/ai-sdk7 (`npm ci`, on a Node >= 22) unless it is there as its lock file says.
 *
 * @example
 * ensureAiSdk7(); // the first time: "[forge-ts] installing AI SDK 7 in .ci/ai-sdk7 with Node v24.21.0 (10 of its packages missing …)"
 */
export function ensureAiSdk7(): void {
  const absent = missing();
  if (absent.length === 0) return;
  const node = ensureNode22();
  const version = execFileSync(node, ["--version"], { encoding: "utf8" }).trim();
  console.warn(`[forge-ts] installing AI SDK 7 in .ci/ai-sdk7 with Node ${version} (${absent.length} of its packages missing or not at the locked version)`);
  execFileSync("npm", ["ci", "--prefix", ".ci/ai-sdk7", "--no-fund", "--no-audit"], { cwd: ROOT, stdio: ["ignore", "inherit", "inherit"], env: node22Env(node) });
  const still = missing();
  if (still.length > 0) throw new Error(`npm ci --prefix .ci/ai-sdk7 did not provide: ${still.join(", ")}`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) ensureAiSdk7();
