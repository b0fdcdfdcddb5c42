/**
 * Any thrown value as text, without throwing again (a getter that throws, an object that refuses
 * String()).
 */

/** Render any thrown value as a short string for feeding back to the model. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return `${safeProperty(error, "name")}: ${safeProperty(error, "message")}`;
  return safeString(error);
}

/** A string property of a thrown Error; a getter that throws or a non-string still gives text. */
export function safeProperty(error: Error, key: "name" | "message"): string {
  try {
    const value: unknown = error[key];
    return typeof value === "string" ? value : safeString(value);
  } catch {
    return `[unreadable ${key}]`;
  }
}

/** String(value), except for values that refuse conversion (e.g. Object.create(null)). */
export function safeString(value: unknown): string {
  try {
    return String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}
