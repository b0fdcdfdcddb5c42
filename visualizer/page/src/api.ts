// The page's requests to its server, with the token when it has one. A visualizer bound beyond
// loopback prints its URL as …/#token=…: the token is kept for this tab (sessionStorage) and
// taken off the address bar, so a copied run link (#run=…) never carries it.

const KEY = "forge-visualizer-token";

function takeToken(): string {
  let stored = "";
  try {
    stored = sessionStorage.getItem(KEY) ?? "";
  } catch {
    // storage disabled: the token lives as long as the page
  }
  const params = new URLSearchParams(location.hash.slice(1));
  const fromHash = params.get("token");
  if (!fromHash) return stored;
  try {
    sessionStorage.setItem(KEY, fromHash);
  } catch {
    /* see above */
  }
  params.delete("token");
  const rest = params.toString();
  history.replaceState(null, "", rest ? `#${rest}` : `${location.pathname}${location.search}`);
  return fromHash;
}

const token = takeToken();

/** fetch() of an /api path, with the token. */
export function api(path: string, init: RequestInit = {}): Promise<Response> {
  const headers = { ...((init.headers as Record<string, string> | undefined) ?? {}), ...(token ? { authorization: `Bearer ${token}` } : {}) };
  return fetch(path, { ...init, headers });
}

/** An EventSource on an /api path: it cannot send headers, so the token goes in the query. */
export function apiEvents(path: string): EventSource {
  return new EventSource(token ? `${path}${path.includes("?") ? "&" : "?"}token=${encodeURIComponent(token)}` : path);
}

/** An error body as the server sends it (visualizer/http-problem.ts). */
export interface ProblemBody {
  error?: { code?: string; message?: string; problem?: string };
}

/** POST a JSON body; resolves to { ok, status, body } (body: the parsed JSON, or null). */
export async function postJson(path: string, body: unknown): Promise<{ ok: boolean; status: number; body: ProblemBody | null }> {
  let res: Response;
  try {
    res = await api(path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  } catch (err) {
    return { ok: false, status: 0, body: { error: { code: "network", message: (err as Error)?.message ?? String(err) } } };
  }
  const parsed = (await res.json().catch(() => null)) as ProblemBody | null;
  return { ok: res.ok, status: res.status, body: parsed };
}
