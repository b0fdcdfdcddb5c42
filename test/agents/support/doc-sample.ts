/**
 * A client page's sample (the one ```` ```ts run ```` block of docs/clients/<page>.md) run as the
 * page shows it, the way the agent pages are: the live proxy address in place of the page's
 * `http://127.0.0.1:8081`, and its AI SDK imports on the AI SDK 7 line the docs' type-check
 * gives them (DOC_AI_SDK_7). The module runs on import, in this process.
 */
import { randomUUID } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { blocksOf, DOC_AI_SDK_7, isTsBlock, tsconfigPaths } from "../../docs/support/doc-blocks.js";
import { DOC_PROXY_URL } from "./agent-setup.js";

const ROOT = path.resolve(import.meta.dirname, "../../..");
// Inside the repository, so the sample's packages resolve from node_modules.
const DIR = path.join(ROOT, "test-output", "doc-samples");

/**
 * The sample's source, ready to run against `url`.
 *
 * @example
 * docSample("docs/clients/ollama-js.md", "http://127.0.0.1:40123"); // 'import { Ollama } from "ollama"; …'
 */
export function docSample(page: string, url: string): string {
  const runs = blocksOf(page, readFileSync(path.join(ROOT, page), "utf8")).filter((b) => isTsBlock(b) && b.info === "run");
  if (runs.length !== 1) throw new Error(`${page}: ${runs.length} \`\`\`ts run blocks (one wanted)`);
  // tsconfig `paths` apply to the project's own files only: the aliases become their files.
  return runs[0]!.code
    .replaceAll(DOC_PROXY_URL, url)
    .replace(/(\bfrom\s+["'])([^"']+)(["'])/g, (whole, open: string, name: string, close: string) => {
      const alias = DOC_AI_SDK_7[name];
      return alias === undefined ? whole : `${open}${tsconfigPaths(ROOT, alias)[0]}${close}`;
    });
}

/**
 * @example
 * await runDocSample("docs/clients/ollama-js.md", proxyUrl); // the page's loop ran to its end
 */
export async function runDocSample(page: string, url: string): Promise<void> {
  mkdirSync(DIR, { recursive: true });
  const file = path.join(DIR, `${path.basename(page, ".md")}-${randomUUID()}.ts`);
  writeFileSync(file, docSample(page, url));
  try {
    await import(pathToFileURL(file).href);
  } finally {
    rmSync(file, { force: true });
  }
}
