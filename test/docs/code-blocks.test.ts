/**
 * The docs keep their word: every ```ts block in README.md and docs/*.md compiles against the
 * package's public entry points (package.json `exports`, mapped to their source files), and every
 * name a doc imports from "forge-ts…" — in a ts block, another fence or prose — is exported by
 * the entry it names. Blocks are modules compiled by TypeScript's own `tsc`; a fragment gets the
 * declarations of test/docs/doc-fragments.d.ts; a skip is explicit and counted (docs/contributing.md).
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { blocksOf, DOC_AI_SDK_7, docFiles, forgeImportsOf, isTsBlock, readDoc, tsconfigPaths, type DocBlock, type DocImport } from "./support/doc-blocks.js";

const exec = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "../..");
// Inside the repository so that zod, openai, @modelcontextprotocol/sdk... resolve from node_modules;
// a folder of this run's own (made in beforeAll), so two suites in one checkout never share it.
const OUT_BASE = path.join(ROOT, "test-output", "doc-blocks");
let OUT = OUT_BASE;
const TSC = path.join(ROOT, "node_modules", ".bin", "tsc");

/** `forge-ts`, `forge-ts/sql`, ... → the source file behind each entry's published types. */
function entryPoints(): Record<string, string> {
  const pkg = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { name: string; exports: Record<string, { types?: string } | string> };
  const entries: Record<string, string> = {};
  for (const [key, target] of Object.entries(pkg.exports)) {
    if (typeof target === "string" || !target.types) continue;
    const source = target.types.replace(/^\.\/dist\//, "").replace(/\.d\.ts$/, ".ts");
    entries[key === "." ? pkg.name : `${pkg.name}/${key.slice(2)}`] = path.join(ROOT, source);
  }
  return entries;
}

/**
 * Packages a doc shows that the project does not depend on: declared here with the shapes the
 * docs use (the OpenTelemetry Node SDK's provider is the base SDK's, plus `register()`).
 */
const UNDEPENDED_MODULES = `
declare module "@opentelemetry/sdk-trace-node" {
  import { BasicTracerProvider, type TracerConfig } from "@opentelemetry/sdk-trace-base";
  export { BatchSpanProcessor, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
  export class NodeTracerProvider extends BasicTracerProvider {
    constructor(config?: TracerConfig);
    register(): void;
  }
}
`;

interface Program {
  readonly name: string;
  readonly files: Map<string, { readonly source: string; readonly doc?: string; readonly lineOffset: number }>;
}

const fileName = (block: DocBlock): string => `${block.file.replace(/[^\w]+/g, "-")}-L${block.line}.ts`;

/**
 * The docs show AI SDK 7, which the project installs in .ci/ai-sdk7 beside AI SDK 6 under npm
 * aliases (6 stays `ai` for the Node 20 tests), mapped by tsconfig.json `paths`: a doc's `ai`,
 * `@ai-sdk/*` and `ollama-ai-provider-v2` imports resolve to the 7 line (and forge-ts/ai-sdk's
 * @ai-sdk/provider to its 4): DOC_AI_SDK_7 names the aliases.
 */
const AI_SDK_7: Record<string, string[]> = Object.fromEntries(Object.entries(DOC_AI_SDK_7).map(([name, alias]) => [name, tsconfigPaths(ROOT, alias)]));

/** Writes one tsconfig and its files; returns tsc's diagnostics mapped back to the Markdown. */
async function compile(program: Program, entries: Record<string, string>, extraFiles: readonly string[]): Promise<string[]> {
  const dir = path.join(OUT, program.name);
  mkdirSync(dir, { recursive: true });
  for (const [name, { source }] of program.files) writeFileSync(path.join(dir, name), source);
  writeFileSync(path.join(dir, "undepended-modules.d.ts"), UNDEPENDED_MODULES);
  const config = {
    extends: path.join(ROOT, "tsconfig.json"),
    compilerOptions: {
      noEmit: true,
      // A doc shows how to call something, not a whole program: a name it leaves unused is fine.
      noUnusedLocals: false,
      noUnusedParameters: false,
      paths: { ...Object.fromEntries(Object.entries(entries).map(([name, file]) => [name, [file]])), ...AI_SDK_7 },
    },
    files: [...program.files.keys(), "undepended-modules.d.ts", ...extraFiles],
    include: [],
  };
  writeFileSync(path.join(dir, "tsconfig.json"), JSON.stringify(config, null, 2));
  const output = await exec(TSC, ["-p", path.join(dir, "tsconfig.json"), "--pretty", "false"], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 }).then(
    (r) => r.stdout,
    (e: { stdout?: string; stderr?: string }) => `${e.stdout ?? ""}${e.stderr ?? ""}`,
  );
  return output
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => {
      const m = /^(.*?)\((\d+),(\d+)\): (.*)$/.exec(line);
      const file = m ? program.files.get(path.basename(m[1]!)) : undefined;
      if (!m || !file) return line;
      return `${file.doc ? `${file.doc}:${Number(m[2]) + file.lineOffset}` : `${path.basename(m[1]!)}:${m[2]}`}: ${m[4]}`;
    });
}

describe("the docs' code", () => {
  const entries = entryPoints();
  const blocks: DocBlock[] = [];
  const imports: DocImport[] = [];
  for (const file of docFiles(ROOT)) {
    const text = readDoc(ROOT, file);
    blocks.push(...blocksOf(file, text).filter(isTsBlock));
    imports.push(...forgeImportsOf(file, text));
  }
  let diagnostics: string[] = [];

  beforeAll(async () => {
    mkdirSync(OUT_BASE, { recursive: true });
    OUT = mkdtempSync(path.join(OUT_BASE, "run-"));
    const modules: Program = { name: "modules", files: new Map() };
    const fragments: Program = { name: "fragments", files: new Map() };
    for (const block of blocks) {
      if (block.mode === "skip") continue;
      // `export {}` keeps every block a module of its own: no block sees another's names.
      const preamble = block.preamble ? `${block.preamble}\n` : "";
      const entry = { source: `${preamble}${block.code}\nexport {};\n`, doc: block.file, lineOffset: block.line - 1 - (preamble ? 1 : 0) };
      (block.mode === "fragment" ? fragments : modules).files.set(fileName(block), entry);
    }
    // Every imported name, once per doc line, as its own import (type-only ones with `type`).
    const names = imports.map(
      (imp, i) => `import { ${imp.names.map((n, j) => `${n.typeOnly ? "type " : ""}${n.name} as _${i}_${j}`).join(", ")} } from "${imp.specifier}"; // ${imp.file}:${imp.line}`,
    );
    modules.files.set("imported-names.ts", { source: `${names.join("\n")}\nexport {};\n`, lineOffset: 0 });
    const fragmentDeclarations = path.join(ROOT, "test", "docs", "doc-fragments.d.ts");
    const [a, b] = await Promise.all([compile(modules, entries, []), compile(fragments, entries, [fragmentDeclarations])]);
    diagnostics = [...a, ...b];
    const skipped = blocks.filter((b) => b.mode === "skip");
    console.log(
      `doc ts blocks: ${blocks.length} found, ${modules.files.size - 1} checked as modules, ${fragments.files.size} as fragments, ${skipped.length} skipped` +
        skipped.map((b) => `\n  skipped ${b.file}:${b.line}: ${b.reason}`).join(""),
    );
  }, 180_000);
  // The diagnostics name the Markdown lines, not these files.
  afterAll(() => rmSync(OUT, { recursive: true, force: true }));

  it("finds the ts blocks and the imports it checks", () => {
    expect(blocks.length).toBeGreaterThan(15);
    expect(imports.length).toBeGreaterThan(5);
  });

  it("type-checks every ts block that is not explicitly skipped", () => {
    expect(diagnostics).toEqual([]);
  });

  it("gives every skip a reason", () => {
    expect(blocks.filter((b) => b.mode === "skip" && !b.reason).map((b) => `${b.file}:${b.line}`)).toEqual([]);
  });

  it("imports only entry points package.json exports", () => {
    expect(imports.filter((imp) => !(imp.specifier in entries)).map((imp) => `${imp.file}:${imp.line} ${imp.specifier}`)).toEqual([]);
  });

  it("imports only names the entry exports at run time (type-only names are left to tsc)", async () => {
    const missing: string[] = [];
    for (const imp of imports) {
      const file = entries[imp.specifier];
      if (!file) continue;
      const mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
      for (const { name, typeOnly } of imp.names) if (!typeOnly && mod[name] === undefined) missing.push(`${imp.file}:${imp.line} ${name} from ${imp.specifier}`);
    }
    expect(missing).toEqual([]);
  }, 120_000);
});
