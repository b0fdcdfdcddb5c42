/**
 * Every relative link in README.md and docs/*.md resolves inside the repository (the file, and
 * the heading an anchor names) and inside the published package (package.json `files`: the
 * package's reader has the README and docs/, not the source), and the README links every docs
 * page.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { docFiles, readDoc } from "./support/doc-blocks.js";

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
const slug = (heading: string): string =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");

function anchorsOf(text: string): Set<string> {
  const outside = text.replace(/^```[\s\S]*?^```/gm, "");
  return new Set([...outside.matchAll(/^#{1,6} (.*)$/gm)].map((m) => slug(m[1]!.trim())));
}

/** The relative link targets of a doc, outside code and HTML comments. */
function linksOf(file: string): string[] {
  // Code and HTML comments (a placeholder for a page not written yet) are not links.
  const text = readDoc(".", file).replace(/^```[\s\S]*?^```/gm, "").replace(/<!--[\s\S]*?-->/g, "");
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((target) => !/^[a-z]+:/i.test(target));
}

/** Whether the published package holds `file` (a path from the root): a `files` entry or under one. */
function shipped(file: string): boolean {
  const { files } = JSON.parse(readFileSync("package.json", "utf8")) as { files: string[] };
  return files.some((entry) => file === entry || file.startsWith(`${entry}/`));
}

describe("doc links", () => {
  const files = docFiles(".");

  it.each(files)("%s: every relative link resolves", (file) => {
    const broken: string[] = [];
    for (const target of linksOf(file)) {
      const [file_, anchor] = target.split("#") as [string, string | undefined];
      const resolved = file_ === "" ? file : path.join(path.dirname(file), file_);
      if (!existsSync(resolved)) broken.push(`${target} (no ${resolved})`);
      else if (anchor && resolved.endsWith(".md") && !anchorsOf(readDoc(".", resolved)).has(anchor)) broken.push(`${target} (no heading #${anchor} in ${resolved})`);
    }
    expect(broken).toEqual([]);
  });

  it.each(files)("%s: every relative link resolves in the published package", (file) => {
    expect(shipped(file)).toBe(true);
    const outside = linksOf(file)
      .map((target) => path.normalize(path.join(path.dirname(file), target.split("#")[0]!)))
      .filter((target) => target !== "." && !shipped(target));
    expect(outside).toEqual([]);
  });

  it("the README links every docs page", () => {
    const readme = readDoc(".", "README.md");
    expect(files.filter((f) => f !== "README.md" && !readme.includes(`](${f})`))).toEqual([]);
  });
});
