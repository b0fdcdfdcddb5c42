/**
 * `npm run eval:report -- a.jsonl [b.jsonl ...] [--list-only] [--markdown dir] [--html file]
 *  [--ablation a b] [--tags t] [--exclude-scenario s] [--include-partial]`
 */
import { existsSync, writeFileSync } from "node:fs";
import { isMainModule, runCli } from "../../src/cli-kit/run-cli.js";
import { InvalidArgumentError } from "../../src/core/index.js";
import { mergeGenerations, mergeNotes } from "../generation.js";
import { writeMarkdownReports } from "../report/markdown.js";
import { renderHtml } from "../report/html.js";
import { renderFamilies } from "../report/families.js";
import { renderList } from "../report/list.js";
import { buildReportData, filterRecords, partialConfigs, partialNote } from "../report/report-data.js";
import { renderTable } from "../report/table.js";
import { readRecords } from "../run-record.js";
import { getAblation } from "../ablation.js";
import { assertTags, selectScenarios } from "../scenarios/index.js";
import { many, one, outFile, parseFlags } from "./args.js";

const SPEC = {
  markdown: "one", html: "one", ablation: "many", tags: "many", "exclude-scenario": "many", "include-partial": "bool", "list-only": "bool", "by-family": "bool", title: "one", help: "bool",
} as const;

const help = (command: string) => `usage: ${command} results.jsonl [more.jsonl ...] [--list-only] [--markdown dir] [--html file]
  [--ablation a b] [--tags t] [--exclude-scenario s ...] [--include-partial] [--by-family] [--title T]

  files               merged in the order given. Per config only the runs of its newest
                      generation are kept (a line says how many older ones were superseded);
                      a run recorded twice at one generation keeps the later record (a line
                      says how many were dropped)
  --ablation          only configs of these ablation presets
  --tags              only scenarios with any of these tags
  --exclude-scenario  drop these scenarios from the aggregates and the columns
  --include-partial   keep configs whose scenarios have unequal run counts (a batch still
                      under way); by default they are left out, named in one line
  --list-only         the list view only, not the table
  --by-family         one row per scenario family and config (plumbing, model_quality,
                      advanced, compaction, human, mcp), instead of the table and list
  --markdown DIR      summary.md and one page per config; --html FILE an offline dashboard

The table has forge's columns: Scr = correct / attempted, VAcc = correct / validated (a run
whose validator threw is not validated), Cmp = completed / attempted, Eff = min(1, sum ideal /
sum iterations) over correct runs, Wst = mean max(0, iterations - ideal) over completed runs,
Spd = mean seconds over completed runs of scenarios not tagged compaction, N = runs per
scenario; then each scenario's score. An incomplete last line (a batch killed mid-write) is
skipped with a note; any other line that is not a run record is an error naming file:line.
Exit codes: 0 done, 2 bad flags, a file that does not exist or no matching runs.`;

/** `npm run eval:report --` in a checkout, `forge-ts report` from the package. */
export function reportMain(argv: readonly string[], command = "npm run eval:report --"): void {
  const p = parseFlags(argv, SPEC);
  if (p.flags.help) return void console.log(help(command));
  // A mistyped preset, tag or scenario would match nothing: refuse it, naming the known ones.
  for (const name of many(p, "ablation")) getAblation(name);
  assertTags(many(p, "tags"));
  const excluded = many(p, "exclude-scenario");
  if (excluded.length > 0) selectScenarios({ names: excluded });
  const html = one(p, "html") === undefined ? undefined : outFile(one(p, "html")!, "--html");
  const files = p.positional;
  if (files.length === 0) throw new InvalidArgumentError("results", "give the JSONL file(s) to report on");
  const missing = files.filter((f) => !existsSync(f));
  if (missing.length > 0) throw new InvalidArgumentError("results", `${missing.join(", ")} ${missing.length === 1 ? "does" : "do"} not exist`);

  // Generations are chosen over whole configs before any filter: a filter never brings back a superseded run.
  const merged = mergeGenerations(files.flatMap((f) => readRecords(f)));
  const filtered = filterRecords(merged.records, { ablations: many(p, "ablation"), tags: many(p, "tags"), excludeScenarios: excluded });
  const notes = mergeNotes(merged);
  const partial = p.flags["include-partial"] ? [] : partialConfigs(filtered);
  if (partial.length > 0) notes.push(partialNote(partial));
  const left = new Set(partial.map((c) => c.config));
  const records = filtered.filter((r) => !left.has(r.config));
  for (const note of notes) console.log(note);
  if (records.length === 0) {
    const why = filtered.length > 0 ? "every config is incomplete (--include-partial shows them)" : "no runs match the filters";
    throw new InvalidArgumentError("results", `${files.join(", ")}: ${why}`);
  }
  const data = buildReportData(records, notes);
  if (notes.length > 0) console.log("");
  if (p.flags["by-family"]) console.log(renderFamilies(records));
  else {
    if (!p.flags["list-only"]) console.log(`${renderTable(data)}\n`);
    console.log(renderList(data));
  }
  const md = one(p, "markdown");
  if (md) console.log(`\nmarkdown: ${writeMarkdownReports(data, md).join(", ")}`);
  if (html) {
    const simulated = records.some((r) => r.backend === "sim");
    writeFileSync(html, renderHtml(data, { title: one(p, "title") ?? "forge-ts eval dashboard", ...(simulated ? { note: "Includes SIMULATED runs (backend sim): the simulated model measures the harness and guardrails, not a real model." } : {}) }));
    console.log(`html: ${html}`);
  }
}

if (isMainModule(import.meta.url)) runCli(reportMain, process.argv.slice(2));
