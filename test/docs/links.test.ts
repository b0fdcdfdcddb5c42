/**
 * Every relative link in README.md and docs/*.md resolves inside the repository (the file, and
 * the heading an anchor names), and the README links every docs page.
 */
import { existsSync } from "node:fs";
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

describe("doc links", () => {
  const files = docFiles(".");

  it.each(files)("%s: every relative link resolves", (file) => {
    // Code and HTML comments (a placeholder for a page not written yet) are not links.
    const text = readDoc(".", file).replace(/^```[\s\S]*?^```/gm, "").replace(/<!--[\s\S]*?-->/g, "");
    const broken: string[] = [];
    for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1]!;
      if (/^[a-z]+:/i.test(target)) continue;
      const [file_, anchor] = target.split("#") as [string, string | undefined];
      const resolved = file_ === "" ? file : path.join(path.dirname(file), file_);
      if (!existsSync(resolved)) broken.push(`${target} (no ${resolved})`);
      else if (anchor && resolved.endsWith(".md") && !anchorsOf(readDoc(".", resolved)).has(anchor)) broken.push(`${target} (no heading #${anchor} in ${resolved})`);
    }
    expect(broken).toEqual([]);
  });

  it("the README links every docs page", () => {
    const readme = readDoc(".", "README.md");
    expect(files.filter((f) => f !== "README.md" && !readme.includes(`](${f})`))).toEqual([]);
  });
});
