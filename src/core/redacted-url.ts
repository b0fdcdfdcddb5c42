/**
 * A URL for logs and errors: a password in it is shown as "***". Text that does not parse as a
 * URL (a store value with a typo) has anything between `//` and `@` masked instead.
 */
export function redactedUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return url.replace(/\/\/[^@/]*@/, "//***@");
  }
}
