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
   * A histogram's observation count (its +Inf bucket) summed over every label set: the parser
   * keeps a histogram's buckets but not its labels.
   */
  count(name: string): number;
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
    count: (name) => samples(name, {}).reduce((sum, m) => sum + Number(m.buckets?.["+Inf"] ?? 0), 0),
    labelValues: (name, label) => [...new Set(samples(name, {}).flatMap((m) => (m.labels?.[label] === undefined ? [] : [m.labels[label]!])))].sort(),
  };
}
