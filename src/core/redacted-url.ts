/** A URL for logs and errors: a password in it is shown as "***" (text that is no URL is returned as it is). */
export function redactedUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return url;
  }
}
