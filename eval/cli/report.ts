/**
 * `npm run eval:report -- results.jsonl [--list-only] [--markdown dir] [--html file]
 *  [--ablation a b] [--tags t]`
 */
import { writeFileSync } from "node:fs";
import { InvalidArgumentError } from "../../src/core/index.js";
import { writeMarkdownReports } from "../report/markdown.js";
import { renderHtml } from "../report/html.js";
import { renderList } from "../report/list.js";
import { buildReportData, filterRecords } from "../report/report-data.js";
import { renderTable } from "../report/table.js";
import { readRecords } from "../run-record.js";
import { many, one, parseFlags } from "./args.js";

const SPEC = { markdown: "one", html: "one", ablation: "many", tags: "many", "list-only": "bool", title: "one", help: "bool" } as const;

function main(argv: string[]): void {
  const p = parseFlags(argv, SPEC);
  if (p.flags.help) return void console.log("usage: npm run eval:report -- results.jsonl [--list-only] [--markdown dir] [--html file] [--ablation a b] [--tags t]");
  const file = p.positional[0];
  if (!file) throw new InvalidArgumentError("results", "give the JSONL file to report on");
  const records = filterRecords(readRecords(file), { ablations: many(p, "ablation"), tags: many(p, "tags") });
  if (records.length === 0) throw new InvalidArgumentError("results", `${file} has no runs matching the filters`);
  const data = buildReportData(records);
  if (!p.flags["list-only"]) console.log(`${renderTable(data)}\n`);
  console.log(renderList(data));
  const md = one(p, "markdown");
  if (md) console.log(`\nmarkdown: ${writeMarkdownReports(data, md).join(", ")}`);
  const html = one(p, "html");
  if (html) {
    const simulated = records.some((r) => r.backend === "sim");
    writeFileSync(html, renderHtml(data, { title: one(p, "title") ?? "forge-ts eval dashboard", ...(simulated ? { note: "Includes SIMULATED runs (backend sim): the simulated model measures the harness and guardrails, not a real model." } : {}) }));
    console.log(`html: ${html}`);
  }
}

try {
  main(process.argv.slice(2));
} catch (error: unknown) {
  console.error(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
  process.exitCode = 1;
}
