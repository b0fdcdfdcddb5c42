/**
 * The one redaction of secrets, used wherever text leaves the process — error messages (every
 * ForgeError's and HttpError's), log lines and banners, health reports, spans, stored records:
 *
 * - a URL's password (`http://user:PASS@host` → `user:***@`); on http(s), a user without a
 *   password too (a token as the user: `https://TOKEN@host` → `***@`), while a database's
 *   `postgres://postgres@host` keeps its user name;
 * - a URL's query parameters that carry credentials become `***`: a name (case-insensitive,
 *   `-` and `_` ignored) that is `auth`, `authorization`, `code`, `pwd`, `passwd`, `sig`, or ends in
 *   `token`, `key`, `secret`, `password`, `signature`, `credential(s)` — `token`, `api_key`,
 *   `apiKey`, `authToken` (libSQL), `access_token`, `X-Amz-Signature`, `sig` (Azure SAS)…;
 * - the keys configured in this process (`registerSecret`: an API key given to a client or to
 *   the proxy) wherever they appear, e.g. echoed back in a backend's error body.
 *
 * Records that must keep working without the secret (a run's launch record) drop it instead
 * (`withoutCredentials`). The process-wide list is deliberate: a key configured once must not
 * come back out through any path, including ones written later.
 */

const MASK = "***";
const SECRET_NAME = /^(auth|authorization|code|pwd|passwd|sig|.*(token|key|secret|password|signature|credentials?))$/;
/** A URL inside free text: a scheme, `://`, then up to a space, quote or bracket. */
const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`\\]+/gi;
/**
 * Configured keys shorter than this are not searched for in free text: a short key ("secret",
 * "changeme") is an ordinary word, and masking it would garble paths and messages (a URL's
 * credentials are masked whatever their length).
 */
export const MIN_SECRET_LENGTH = 12;
const MAX_SECRETS = 256;
const secrets = new Set<string>();

/**
 * Whether a query parameter's name says it carries a credential.
 *
 * @example isCredentialParam("authToken") // true; isCredentialParam("model") // false
 */
export function isCredentialParam(name: string): boolean {
  return SECRET_NAME.test(name.toLowerCase().replace(/[-_]/g, ""));
}

/**
 * A key this process was given, to be masked wherever it shows up.
 *
 * @example registerSecret(options.apiKey);
 */
export function registerSecret(value: string | undefined): void {
  if (value === undefined || value.length < MIN_SECRET_LENGTH || secrets.has(value)) return;
  // Bounded: a process that builds clients in a loop with fresh keys keeps the latest ones.
  if (secrets.size >= MAX_SECRETS) secrets.delete(secrets.values().next().value!);
  secrets.add(value);
}

/**
 * @example
 * redactUrl("http://me:hunter2@llm.lan:8080/v1?token=abc&model=q"); // "http://me:***@llm.lan:8080/v1?token=***&model=q"
 */
export function redactUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // Not a URL (a store value with a typo): anything between `//` and `@` is masked.
    return maskSecrets(url.replace(/\/\/[^@/]*@/, `//${MASK}@`));
  }
  const web = parsed.protocol === "http:" || parsed.protocol === "https:";
  const user = parsed.password !== "" ? `${parsed.username}:${MASK}` : parsed.username === "" ? undefined : web ? MASK : parsed.username;
  let changed = false;
  for (const name of new Set(parsed.searchParams.keys())) {
    if (!isCredentialParam(name)) continue;
    parsed.searchParams.set(name, MASK);
    changed = true;
  }
  if (user === undefined && !changed) return maskSecrets(url);
  parsed.username = "";
  parsed.password = "";
  let out = parsed.href.replace(/%2A%2A%2A/g, MASK);
  if (user !== undefined) out = out.replace("//", `//${user}@`);
  return maskSecrets(out);
}

/**
 * A URL to keep: without user-info and without credential parameters.
 *
 * @example withoutCredentials("libsql://db.example?authToken=abc"); // "libsql://db.example"
 */
export function withoutCredentials(url: string): string {
  const parsed = new URL(url);
  const params = [...new Set(parsed.searchParams.keys())].filter(isCredentialParam);
  if (parsed.username === "" && parsed.password === "" && params.length === 0) return url;
  parsed.username = "";
  parsed.password = "";
  for (const name of params) parsed.searchParams.delete(name);
  return parsed.href;
}

/**
 * Free text with every URL in it redacted and every configured secret masked.
 *
 * @example
 * redactText("No usable HTTP answer from http://u:p@h/v1: refused"); // "No usable HTTP answer from http://u:***@h/v1: refused"
 */
export function redactText(text: string): string {
  if (text === "") return text;
  return maskSecrets(
    text.replace(URL_IN_TEXT, (match) => {
      // Punctuation that ends the sentence around a URL is not part of it ("from http://h/v1: refused").
      const tail = /[.,;:!?)\]}]+$/.exec(match)?.[0] ?? "";
      return redactUrl(match.slice(0, match.length - tail.length)) + tail;
    }),
  );
}

function maskSecrets(text: string): string {
  let out = text;
  for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(MASK);
  return out;
}
