/**
 * The code the README and docs/*.md show, read out of the Markdown: fenced blocks with their
 * ts-check directive, and every `import { ... } from "forge-ts..."` line whatever fence (or none)
 * it sits in. The directive is an HTML comment on the line before the fence (docs/contributing.md):
 *   <!-- ts-check: fragment -->                  checked with test/docs/doc-fragments.d.ts's declarations
 *   <!-- ts-check: fragment <declarations> -->   the same, with these (one line of TypeScript) first
 *   <!-- ts-check: skip <reason> -->             not checked; counted and printed with its reason
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

export type CheckMode = "module" | "fragment" | "skip";

export interface DocBlock {
  /** Path from the repository root, e.g. `docs/runner.md`. */
  readonly file: string;
  /** 1-based line of the block's first code line. */
  readonly line: number;
  readonly lang: string;
  /** The rest of the fence's opening line after the language (e.g. `file=opencode.json`). */
  readonly info: string;
  readonly code: string;
  readonly mode: CheckMode;
  /** A skip's reason. */
  readonly reason?: string;
  /** A fragment's own declarations, compiled before its code. */
  readonly preamble?: string;
}

export interface DocImport {
  readonly file: string;
  readonly line: number;
  readonly specifier: string;
  readonly names: readonly { readonly name: string; readonly typeOnly: boolean }[];
}

const TS_LANGS = new Set(["ts", "typescript", "tsx"]);
const DIRECTIVE = /^<!--\s*ts-check:\s*(fragment|skip)\b\s*(.*?)\s*-->$/;

/** README.md and every docs/*.md, as paths from `root`. */
export function docFiles(root: string): string[] {
  // Sub-folders too (docs/agents/): every page is held to the same checks.
  const docs = readdirSync(path.join(root, "docs"), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".md"))
    .map((f) => f.split(path.sep).join("/"))
    .sort();
  return ["README.md", ...docs.map((f) => `docs/${f}`)];
}

/** Every fenced block of `text`; `mode` is read from the directive line before the fence. */
export function blocksOf(file: string, text: string): DocBlock[] {
  const lines = text.split("\n");
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(`{3,})\s*([\w-]*)(.*)$/.exec(lines[i]!);
    if (!open) continue;
    const fence = open[1]!;
    let end = i + 1;
    while (end < lines.length && !lines[end]!.startsWith(fence)) end++;
    let prev = i - 1;
    while (prev >= 0 && lines[prev]!.trim() === "") prev--;
    const directive = prev >= 0 ? DIRECTIVE.exec(lines[prev]!.trim()) : null;
    const mode: CheckMode = directive ? (directive[1] as CheckMode) : "module";
    blocks.push({
      file,
      line: i + 2,
      lang: open[2]!.toLowerCase(),
      info: open[3]!.trim(),
      code: lines.slice(i + 1, end).join("\n"),
      mode,
      ...(mode === "skip" ? { reason: directive![2] ?? "" } : {}),
      ...(mode === "fragment" && directive![2] ? { preamble: directive![2] } : {}),
    });
    i = end;
  }
  return blocks;
}

export const isTsBlock = (block: DocBlock): boolean => TS_LANGS.has(block.lang);

/** Every `import { ... } from "forge-ts…"` in `text`, in a fence of any language or in prose. */
export function forgeImportsOf(file: string, text: string): DocImport[] {
  const found: DocImport[] = [];
  for (const m of text.matchAll(/import\s+(type\s+)?\{([^}]*)\}\s*from\s*["'](forge-ts(?:\/[\w-]+)?)["']/g)) {
    const wholeTypeOnly = Boolean(m[1]);
    const names = m[2]!
      .split(",")
      .map((part) => part.trim())
      .filter((part) => part !== "")
      .map((part) => {
        const typeOnly = wholeTypeOnly || part.startsWith("type ");
        const name = part.replace(/^type\s+/, "").split(/\s+as\s+/)[0]!.trim();
        return { name, typeOnly };
      });
    found.push({ file, line: text.slice(0, m.index).split("\n").length, specifier: m[3]!, names });
  }
  return found;
}

export function readDoc(root: string, file: string): string {
  return readFileSync(path.join(root, file), "utf8");
}

/**
 * The AI SDK 7 line the docs show, by the name a doc imports it under: the alias .ci/ai-sdk7
 * installs it as (tsconfig.json `paths`), beside the project's AI SDK 6.
 */
export const DOC_AI_SDK_7: Readonly<Record<string, string>> = {
  ai: "ai-v7",
  "@ai-sdk/openai-compatible": "@ai-sdk/openai-compatible-v3",
  "@ai-sdk/anthropic": "@ai-sdk/anthropic-v4",
  "@ai-sdk/provider": "@ai-sdk/provider",
  "ollama-ai-provider-v2": "ollama-ai-provider-v2-v4",
};

/**
 * tsconfig.json's `paths` for one name, as absolute paths.
 *
 * @example
 * tsconfigPaths("/repo", "ai-v7")[0]; // "/repo/.ci/ai-sdk7/node_modules/ai-v7/dist/index"
 */
export function tsconfigPaths(root: string, name: string): string[] {
  const { paths } = (JSON.parse(readFileSync(path.join(root, "tsconfig.json"), "utf8")) as { compilerOptions: { paths: Record<string, string[]> } }).compilerOptions;
  const found = paths[name];
  if (!found) throw new Error(`tsconfig.json has no paths entry for ${name}`);
  return found.map((p) => path.join(root, p));
}
