/**
 * `npm run bench [-- suite ...] [--readme] [--check]`: runs every eval/bench/*.bench.ts suite (or
 * those named) and prints a table; `--readme` also prints the Benchmarks rows (docs/benchmarks.md) from the
 * same run; `--check` compares the rows with their targets (targets.ts) and exits 1 when
 * one is missed.
 */
import { readdir } from "node:fs/promises";
import { fileURLToPath, pathToFileURL } from "node:url";
import path from "node:path";
import type { BenchRow, BenchSuite } from "./harness.js";
import { checkedRows, missedTargets } from "./targets.js";

const dir = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const readme = args.includes("--readme");
const check = args.includes("--check");
const USAGE = "Usage: npm run bench -- [suite ...] [--readme] [--check]";
if (args.includes("--help") || args.includes("-h")) {
  console.log(`${USAGE}\n\n  --readme   also print the Benchmarks rows (docs/benchmarks.md) from this run\n  --check    exit 1 when a row misses its target (eval/bench/targets.ts, the table in docs/benchmarks.md)`);
  process.exit(0);
}
const badFlags = args.filter((a) => a.startsWith("-") && a !== "--readme" && a !== "--check");
if (badFlags.length > 0) {
  console.error(`unknown flag ${badFlags.join(", ")}; ${USAGE}`);
  process.exit(2);
}
const wanted = args.filter((a) => !a.startsWith("-"));
// .bench.js too: the tests spawn this runner transpiled (test/support/cli.ts), suites beside it.
const files = (await readdir(dir)).filter((f) => /\.bench\.[jt]s$/.test(f)).sort();
const suites: BenchSuite[] = [];
for (const file of files) suites.push(((await import(pathToFileURL(path.join(dir, file)).href)) as { suite: BenchSuite }).suite);
// The proxy suite runs these rows too: on their own only when named (and the proxy suite is not).
const scale = ((await import("./proxy-scale.js")) as { suite: BenchSuite }).suite;
suites.push(scale);
const unknown = wanted.filter((w) => !suites.some((s) => s.name === w));
if (unknown.length > 0) {
  console.error(`unknown bench suite${unknown.length > 1 ? "s" : ""} ${unknown.map((u) => `"${u}"`).join(", ")}; use ${suites.map((s) => s.name).join(", ")}`);
  process.exit(2);
}
const rows: BenchRow[] = [];
const readmeRows: string[] = [];
for (const suite of suites) {
  if (wanted.length > 0 && !wanted.includes(suite.name)) continue;
  if (suite === scale && (wanted.length === 0 || wanted.includes("proxy"))) continue;
  process.stderr.write(`running ${suite.name} ...\n`);
  const own = await suite.run();
  rows.push(...own);
  if (readme) readmeRows.push(...suite.readme(own));
}
const fmt = (v: number) => (v >= 100 ? v.toFixed(0) : v >= 1 ? v.toFixed(2) : v.toPrecision(3));
const widths = [20, 44, 12, 10];
const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i] ?? 10)).join(" ");
console.log(line(["suite", "case", "value", "unit"]) + " note");
for (const r of rows) console.log(line([r.suite, r.case, fmt(r.value), r.unit]) + " " + (r.note ?? ""));
if (readme) {
  console.log("\nREADME rows:\n");
  console.log("| suite | case | result | target |\n|---|---|---|---|");
  for (const line of readmeRows) console.log(line);
}
if (check) {
  const missed = missedTargets(rows);
  console.log(`\ntargets: ${checkedRows(rows) - missed.length} of ${checkedRows(rows)} rows checked meet their target (docs/benchmarks.md)`);
  for (const m of missed) console.log(`  MISSED ${m.row.suite} / ${m.row.case}: ${fmt(m.figure)} ${m.row.unit} (target ${m.target.text})`);
  if (missed.length > 0) process.exit(1);
}
