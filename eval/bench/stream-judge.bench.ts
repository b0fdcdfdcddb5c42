/**
 * The streaming judge alone (`npm run bench -- stream-judge`): µs per 1,000 characters of a
 * streamed answer fed in 4-character deltas, at 10k, 100k and 1M characters, for the three shapes
 * of issue 46: prose with code fences and JSON snippets, a bare-JSON `write_file` call whose
 * content is a long escaped string, and the same call inside a Hermes `<tool_call>`. A linear
 * judge gives the same figure at every size; a quadratic one grows tenfold per row.
 */
import { createStreamJudge } from "../../src/parsing/stream-judge.js";
import { fig, mdRow, measure, row, type BenchRow, type BenchSuite } from "./harness.js";

const SUITE = "stream-judge";
const TOOLS = ["get_weather", "search", "write_file"];
export const SIZES = [10_000, 100_000, 1_000_000] as const;
export const DELTA = 4;

const PROSE_BLOCK =
  "The function below reads the config (see [1] and the docs), then returns {\"ok\": true} or an error.\n\n" +
  "```ts\nexport function parse(text: string): Config {\n  const obj = JSON.parse(text) as { name?: string };\n" +
  "  if (!obj.name) throw new Error(\"missing \\\"name\\\"\");\n  return { name: obj.name, items: [1, 2, 3] };\n}\n```\n\n" +
  "A sample payload: {\"name\": \"demo\", \"items\": [1, 2]} works, and so does [\"a\", \"b\"]; call parse(text) with it. " +
  "Arrays such as items[0] and calls like f(x) are ordinary code.\n\n";

const CODE_LINE = "  const message = \"value \\\"quoted\\\" here\"; if (a < b) { run('x', [1, 2]); }\n";

/** `length` characters of `unit` repeated. */
const fill = (unit: string, length: number) => unit.repeat(Math.ceil(length / unit.length)).slice(0, length);

/** (a) Prose with code fences and JSON snippets: whole blocks, then plain prose up to `size`. */
function prose(size: number): string {
  const blocks = PROSE_BLOCK.repeat(Math.floor(size / PROSE_BLOCK.length));
  return blocks + fill("Plain words to finish. ", size - blocks.length);
}

/** The JSON of a `write_file` call whose content string is escaped code, `size` characters in all. */
function writeFileCall(size: number, around: number): string {
  const head = '{"name": "write_file", "arguments": {"path": "src/big.ts", "content": ';
  const tail = "}}";
  // JSON.stringify escapes the code's quotes and newlines: shrink the code until the call fits.
  let code = fill(CODE_LINE, size - head.length - tail.length - around);
  let json = JSON.stringify(code);
  while (head.length + json.length + tail.length + around > size) {
    code = code.slice(0, code.length - (head.length + json.length + tail.length + around - size));
    json = JSON.stringify(code);
  }
  // Cutting escaped characters may overshoot: letters (never escaped) make up the difference.
  json = JSON.stringify(code + "x".repeat(size - head.length - json.length - tail.length - around));
  return head + json + tail;
}

const HERMES_HEAD = "I will write the file now.\n<tool_call>\n";
const HERMES_TAIL = "\n</tool_call>";

/** The answers measured; `label` is the README's wording of `name`. */
export const CASES: readonly { name: string; label: string; answer: (size: number) => string; call: boolean }[] = [
  { name: "prose + fences + JSON snippets", label: "prose with code fences and JSON snippets", answer: prose, call: false },
  {
    name: "bare-JSON write_file, escaped content",
    label: "a bare-JSON `write_file` call, its content a long escaped string",
    answer: (size) => writeFileCall(size, 0),
    call: true,
  },
  {
    name: "Hermes <tool_call>, long argument",
    label: "the same call inside a Hermes `<tool_call>`",
    answer: (size) => HERMES_HEAD + writeFileCall(size, HERMES_HEAD.length + HERMES_TAIL.length) + HERMES_TAIL,
    call: true,
  },
];

/** `text` cut into deltas of `size` characters, as a backend streams it. */
export function deltas(text: string, size = DELTA): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** One streamed answer through a fresh judge; returns whether it ended holding a call. */
export function judgeStream(parts: readonly string[]): boolean {
  const judge = createStreamJudge({ toolNames: TOOLS });
  for (const part of parts) judge.feed(part);
  return judge.holdingCall;
}

/**
 * Mean ms per answer, the best of three rounds (the machine is shared); a run that takes over a
 * second is measured once (a quadratic judge at 1M takes minutes).
 */
async function timeStream(parts: readonly string[]): Promise<number> {
  const start = performance.now();
  judgeStream(parts);
  const once = performance.now() - start;
  if (once > 1000) return once;
  const rounds: number[] = [];
  for (let r = 0; r < 3; r++) rounds.push(await measure(() => judgeStream(parts), { warmup: 2, minIterations: 3, minMs: 300 }));
  return Math.min(...rounds);
}

const caseName = (name: string, size: number) => `${name}, ${size.toLocaleString("en")} chars`;

export const suite: BenchSuite = {
  name: SUITE,
  async run(): Promise<BenchRow[]> {
    const rows: BenchRow[] = [];
    for (const c of CASES) {
      for (const size of SIZES) {
        const text = c.answer(size);
        if (text.length !== size) throw new Error(`${c.name}: generated ${text.length} characters, not ${size}`);
        const parts = deltas(text);
        if (judgeStream(parts) !== c.call) throw new Error(`${c.name}: the judge ${c.call ? "missed the call" : "held prose as a call"}`);
        const ms = await timeStream(parts);
        rows.push({ suite: SUITE, case: caseName(c.name, size), value: (ms * 1000) / (size / 1000), unit: "µs/1k chars", note: `${fig(ms)} ms per answer` });
      }
    }
    return rows;
  },
  readme(rows) {
    return CASES.map((c) =>
      mdRow(
        SUITE,
        `${c.label}, ${DELTA}-character deltas, 10k / 100k / 1M characters`,
        `${SIZES.map((size) => fig(row(rows, caseName(c.name, size)).value)).join(" / ")} µs per 1,000 characters`,
        "",
      ),
    );
  },
};
