/**
 * What a case must show whoever ran it (a coding-agent CLI or a client library in the test's own
 * process): through the proxy, the proxy's counters; directly, a model that only wrote its call
 * as text and a file never created.
 */
import { expect } from "vitest";
import type { ProxyCounts } from "./case-proxy.js";
import type { ModelTurnRecord } from "./fake-ollama.js";
import { TEXT_CASES, type CaseName } from "./turn-policy.js";

/**
 * The proxy did the work, not the caller: text calls rescued, bad calls nudged and retried
 * before the caller saw them; nothing ran out of retries or failed.
 *
 * @example
 * expectProxyDidTheWork("hermes", proxyCounts(proxy.stats()), diagnosis);
 */
export function expectProxyDidTheWork(kase: CaseName, counts: ProxyCounts | undefined, why: string): void {
  if (TEXT_CASES.includes(kase)) expect(counts?.rescues, why).toBeGreaterThan(0);
  if (kase === "misspelled" || kase === "bad-args") expect(counts?.retries, why).toBeGreaterThan(0);
  expect([counts?.exhausted, counts?.failed], why).toEqual([0, 0]);
}

/**
 * Directly against the model: it was asked with the caller's tools and only ever wrote its call
 * as text, and nothing created the file.
 *
 * @example
 * expectTextCallNeverRun({ turns: model.turns, file: null }, diagnosis);
 */
export function expectTextCallNeverRun(o: { turns: readonly ModelTurnRecord[]; file: string | null }, why: string): void {
  expect(o.turns.some((t) => t.tools.length > 0), why).toBe(true);
  expect(o.turns.filter((t) => t.reply.toolCalls !== undefined), why).toEqual([]);
  expect(o.file, why).toBeNull();
}
