/**
 * rescueToolCall throughput on realistic outputs (1 KB, 100 KB) and latency on 1 MB adversarial
 * inputs (the no-catastrophic-backtracking guarantee: each must finish well under a second).
 */
import { RESCUE_FORMATS, renderToolCalls, rescueToolCall } from "../../src/parsing/index.js";
import { fig, mdRow, measure, row, type BenchRow, type BenchSuite } from "./harness.js";

const TOOLS = ["get_weather", "get_time", "search", "write_file"];
const SUITE = "rescue";
const PROSE =
  "The user asked about the weather in a few cities, so I will look it up (see [1]) and then " +
  "summarise: temperatures, wind and the chance of rain — keeping units consistent. ";

function filler(bytes: number): string {
  return PROSE.repeat(Math.ceil(bytes / PROSE.length)).slice(0, bytes);
}

/** ~1 KB: reasoning-free prose plus one Hermes call, the common prompt-injected answer. */
function oneKb(): string {
  const call = renderToolCalls([{ tool: "get_weather", args: { city: "Paris", units: "metric", days: 3 } }], "hermes");
  return `${filler(1024 - call.length - 1)}\n${call}`;
}

/** ~100 KB: long prose with one call in each format spread through it. */
function hundredKb(): { text: string; calls: number } {
  const parts: string[] = [];
  const slice = Math.floor(100 * 1024 / (RESCUE_FORMATS.length + 1));
  for (const format of RESCUE_FORMATS) {
    parts.push(filler(slice), renderToolCalls([{ tool: "search", args: { q: `format ${format}`, limit: 5 } }], format));
  }
  parts.push(filler(slice));
  return { text: parts.join("\n"), calls: RESCUE_FORMATS.length };
}

const M = 1_000_000;
const ADVERSARIAL: Record<string, string> = {
  '"{" x 1e6': "{".repeat(M),
  '"[" x 1e6': "[".repeat(M),
  '"\\"" x 1e6': '"'.repeat(M),
  '"{\\"a\\":" nested x 2e5': '{"a":'.repeat(M / 5),
  '"[{" x 5e5': "[{".repeat(M / 2),
  '"[TOOL_CALLS]" repeated': "[TOOL_CALLS]".repeat(Math.floor(M / 12)),
  '"<tool_call>" unclosed repeated': "<tool_call>".repeat(Math.floor(M / 11)),
  "<tool_call> + JSON prefix repeated": '<tool_call>{"name":"get_time","arguments":{'.repeat(Math.floor(M / 45)),
  '"name[ARGS]" repeated': "get_time[ARGS]".repeat(Math.floor(M / 14)),
  "pythonic prefix repeated": '[get_time(tz="'.repeat(Math.floor(M / 14)),
  "harmony header repeated": "to=functions.get_time<|message|>{".repeat(Math.floor(M / 33)),
  "backslash run in a string": '{"a":"' + "\\".repeat(M),
  "1 MB prose": filler(M),
};

export const suite: BenchSuite = {
  name: SUITE,
  async run(): Promise<BenchRow[]> {
    const rows: BenchRow[] = [];
    const small = oneKb();
    if (rescueToolCall(small, TOOLS).length !== 1) throw new Error("1 KB sample did not parse to one call");
    const smallMs = await measure(() => rescueToolCall(small, TOOLS), { minMs: 500 });
    rows.push({ suite: SUITE, case: "1 KB output, 1 call", value: 1000 / smallMs, unit: "calls/s" });
    rows.push({ suite: SUITE, case: "1 KB output, 1 call", value: small.length / 1e6 / (smallMs / 1000), unit: "MB/s" });

    const big = hundredKb();
    if (rescueToolCall(big.text, TOOLS).length !== big.calls) throw new Error("100 KB sample lost calls");
    const bigMs = await measure(() => rescueToolCall(big.text, TOOLS), { minMs: 500 });
    rows.push({ suite: SUITE, case: `100 KB output, ${big.calls} calls`, value: bigMs, unit: "ms" });
    rows.push({ suite: SUITE, case: `100 KB output, ${big.calls} calls`, value: big.text.length / 1e6 / (bigMs / 1000), unit: "MB/s" });

    for (const [name, text] of Object.entries(ADVERSARIAL)) {
      let found = -1;
      const ms = await measure(() => (found = rescueToolCall(text, TOOLS).length), { warmup: 1, minIterations: 3, minMs: 0 });
      if (found !== 0) throw new Error(`adversarial input ${name} produced ${found} call(s)`);
      rows.push({ suite: SUITE, case: `1 MB adversarial: ${name}`, value: ms, unit: "ms", note: ms < 1000 ? "" : "SLOW" });
    }
    return rows;
  },
  readme(rows) {
    const small = "1 KB output, 1 call";
    const big = rows.find((r) => r.case.startsWith("100 KB output"));
    if (!big) throw new Error('bench row "100 KB output" is missing');
    const adversarial = rows.filter((r) => r.case.startsWith("1 MB adversarial")).map((r) => r.value);
    return [
      mdRow(SUITE, "`rescueToolCall` on a 1 KB output with one call", `≈${fig(row(rows, small, "calls/s").value)} calls/s (${fig(row(rows, small, "MB/s").value)} MB/s)`, ""),
      mdRow(
        SUITE,
        `100 KB output with ${big.case.match(/(\d+) calls/)?.[1]} calls (one per format)`,
        `${fig(row(rows, big.case, "ms").value)} ms (${fig(row(rows, big.case, "MB/s").value)} MB/s)`,
        "",
      ),
      mdRow(
        SUITE,
        `1 MB adversarial inputs (${adversarial.length} kinds: \`[\`×1e6, \`{\`×1e6, unclosed tags, pythonic prefixes, ...)`,
        `${fig(Math.min(...adversarial))}–${fig(Math.max(...adversarial))} ms, all \`[]\``,
        "well under 1 s",
      ),
    ];
  },
};
