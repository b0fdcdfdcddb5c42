/**
 * Checks on a free-text answer, the way forge's plain ("lambda") scenarios validate: the
 * terminal call's text must mention the facts the tools returned. Case is ignored, and so are
 * commas, so "1,500" and "1500" are the same number. A missing or non-string text mentions
 * nothing.
 */

function normalized(text: unknown): string | undefined {
  return typeof text === "string" ? text.toLowerCase().replaceAll(",", "") : undefined;
}

/**
 * Every term appears in the text.
 *
 * @example mentionsAll("Revenue grew 23%, led by Widget Pro", ["23", "widget pro"]) // true
 */
export function mentionsAll(text: unknown, terms: readonly string[]): boolean {
  const t = normalized(text);
  return t !== undefined && terms.every((term) => t.includes(term.toLowerCase()));
}

/**
 * At least one term appears in the text.
 *
 * @example mentionsAny("Roll back to v3.8.1", ["rollback", "roll back", "revert"]) // true
 */
export function mentionsAny(text: unknown, terms: readonly string[]): boolean {
  const t = normalized(text);
  return t !== undefined && terms.some((term) => t.includes(term.toLowerCase()));
}

/**
 * The first capture group of `pattern` in `text` (the whole match when it has none), or "" when
 * it does not match: how an oracle reads an id out of a prose tool result.
 *
 * @example captured("Entity ID: ENT-4728, Status: active", /\bENT-\d+/) // "ENT-4728"
 */
export function captured(text: string, pattern: RegExp): string {
  const m = pattern.exec(text);
  return m ? (m[1] ?? m[0]) : "";
}
