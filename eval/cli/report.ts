/**
 * `npm run eval:report -- results.jsonl [--list-only] [--markdown dir] [--html file]
 *  [--ablation a b] [--tags t]`
 */
import { existsSync, writeFileSync } from "node:fs";
import { isMainModule, runCli } from "../../src/cli-kit/run-cli.js";
import { InvalidArgumentError } from "../../src/core/index.js";
import { writeMarkdownReports } from "../report/markdown.js";
import { renderHtml } from "../report/html.js";
import { renderList } from "../report/list.js";
import { buildReportData, filterRecords } from "../report/report-data.js";
import { renderTable } from "../report/table.js";
import { readRecords } from "../run-record.js";
import { getAblation } from "../ablation.js";
import { assertTags } from "../scenarios/index.js";
import { many, one, outFile, parseFlags } from "./args.js";

const SPEC = { markdown: "one", html: "one", ablation: "many", tags: "many", "list-only": "bool", title: "one", help: "bool" } as const;

const help = (command: string) => `usage: ${command} results.jsonl [--list-only] [--markdown dir] [--html file] [--ablation a b] [--tags t] [--title T]

An incomplete last line (a batch killed mid-write) is skipped with a note; any other line that
is not a run record is an error naming file:line. Exit codes: 0 done, 2 bad flags, a file that
does not exist or has no matching runs.`;

/** `npm run eval:report --` in a checkout, `forge-ts report` from the package. */
export function reportMain(argv: readonly string[], command = "npm run eval:report --"): void {
  const p = parseFlags(argv, SPEC);
  if (p.flags.help) return void console.log(help(command));
  // A mistyped preset or tag would match nothing: refuse it, naming the known ones.
  for (const name of many(p, "ablation")) getAblation(name);
  assertTags(many(p, "tags"));
  const html = one(p, "html") === undefined ? undefined : outFile(one(p, "html")!, "--html");
  const file = p.positional[0];
  if (!file) throw new InvalidArgumentError("results", "give the JSONL file to report on");
  if (!existsSync(file)) throw new InvalidArgumentError("results", `${file} does not exist`);
  const records = filterRecords(readRecords(file), { ablations: many(p, "ablation"), tags: many(p, "tags") });
  if (records.length === 0) throw new InvalidArgumentError("results", `${file} has no runs matching the filters`);
  const data = buildReportData(records);
  if (!p.flags["list-only"]) console.log(`${renderTable(data)}\n`);
  console.log(renderList(data));
  const md = one(p, "markdown");
  if (md) console.log(`\nmarkdown: ${writeMarkdownReports(data, md).join(", ")}`);
  if (html) {
    const simulated = records.some((r) => r.backend === "sim");
    writeFileSync(html, renderHtml(data, { title: one(p, "title") ?? "forge-ts eval dashboard", ...(simulated ? { note: "Includes SIMULATED runs (backend sim): the simulated model measures the harness and guardrails, not a real model." } : {}) }));
    console.log(`html: ${html}`);
  }
}

if (isMainModule(import.meta.url)) runCli(reportMain, process.argv.slice(2));
