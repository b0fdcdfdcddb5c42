/**
 * Scrape a real `/metrics` endpoint over HTTP and read it back with an independent parser
 * (parse-prometheus-text-format), so the tests check the exposition text, not prom-client's objects.
 */
import parsePrometheusTextFormat, { type PromFamily } from "parse-prometheus-text-format";

export interface Scrape {
  families: PromFamily[];
  /** Sum of a counter's or gauge's samples whose labels include `labels` (0 when none match). */
  value(name: string, labels?: Record<string, string>): number;
  /**
   * A histogram's observation count (its `_count` samples) whose labels include `labels`. Read
   * from the text directly: the parser merges a histogram's label sets into one.
   */
  count(name: string, labels?: Record<string, string>): number;
  /** Every distinct value one label takes in a family. */
  labelValues(name: string, label: string): string[];
}

/** @example const s = await scrape(`${url}/metrics`); s.value("forge_proxy_requests_total", { outcome: "ok" }); */
export async function scrape(url: string, headers: Record<string, string> = {}): Promise<Scrape> {
  const res = await fetch(url, { headers });
  if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}: ${await res.text()}`);
  if (!String(res.headers.get("content-type")).startsWith("text/plain")) throw new Error(`unexpected content type ${res.headers.get("content-type")}`);
  return readScrape(await res.text());
}

export function readScrape(text: string): Scrape {
  const families = parsePrometheusTextFormat(text);
  const samples = (name: string, labels: Record<string, string>) => {
    const family = families.find((f) => f.name === name);
    return (family?.metrics ?? []).filter((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
  };
  return {
    families,
    value: (name, labels = {}) => samples(name, labels).reduce((sum, m) => sum + Number(m.value), 0),
    count: (name, labels = {}) =>
      countSamples(text, name)
        .filter((c) => Object.entries(labels).every(([k, v]) => c.labels[k] === v))
        .reduce((sum, c) => sum + c.value, 0),
    labelValues: (name, label) => [...new Set(samples(name, {}).flatMap((m) => (m.labels?.[label] === undefined ? [] : [m.labels[label]!])))].sort(),
  };
}

/** The `<name>_count` lines of a histogram with their labels. */
function countSamples(text: string, name: string): { labels: Record<string, string>; value: number }[] {
  const out: { labels: Record<string, string>; value: number }[] = [];
  for (const line of text.split("\n")) {
    const match = /^(\w+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== `${name}_count`) continue;
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[key!] = value!;
    out.push({ labels, value: Number(match[3]) });
  }
  return out;
}
