/**
 * The rest of Ollama's API around the /api/chat door: what its clients read before they chat
 * (`/`, `/api/version`, `/api/tags`, `/api/show`, `/api/ps`), the endpoints with no tools to
 * guard (`/api/generate`, `/api/embed`, `/api/embeddings`), and the ones never proxied.
 *
 * - In front of an Ollama backend the answers are Ollama's own, passed through; a fleet lists its
 *   own model names and aliases, each with the details of the Ollama model behind it.
 * - In front of any other backend they are built from what the proxy knows: the model names
 *   (`/v1/models` of the backend, or the fleet's names) and the window it enforces.
 * - `/api/show` always reports the window the proxy enforces as `<arch>.context_length`, so a
 *   client sizes its history to what the proxy lets through, and lists the `tools` capability.
 * - A chat with no messages is Ollama's load (or, with `keep_alive: 0`, unload) of a model:
 *   passed through to an Ollama backend, answered `done_reason: "load"` in front of others.
 * - Model management (`pull`, `push`, `create`, `copy`, `delete`, `blobs`) is refused (403): the
 *   proxy guards chat, and those routes are where Ollama's worst advisories live (a heap read
 *   through `/api/create`, server-side requests through `/api/pull`). The error names the
 *   backend to manage models on instead.
 */
import type { Context, Hono, MiddlewareHandler } from "hono";
import { OllamaClient } from "../clients/ollama.js";
import { isBackendError } from "../clients/http.js";
import { isPlainObject } from "../core/json-value.js";
import type { ModelInfo } from "../core/llm.js";
import { redactUrl } from "../core/redact.js";
import { errorRecord, HttpError, toHttpError } from "../proxy-request/http-error.js";
import type { BackendWindows } from "./backend-windows.js";
import type { Fleet } from "./fleet/fleet.js";
import type { PoolBackend } from "./fleet/backend-pool.js";
import { listModels } from "./models.js";
import { parseJsonObject } from "./request-body.js";

/** The Ollama API this door speaks (tool names on results, `think`, call ids), reported in front of other backends. */
export const OLLAMA_API_VERSION = "0.12.0";

/** Ollama's own architecture key for a model the proxy describes itself. */
const ARCH = "forge";

const MANAGEMENT = ["/api/pull", "/api/push", "/api/create", "/api/copy", "/api/delete", "/api/blobs/*"];

export interface OllamaApiOptions {
  fleet: Fleet;
  windows: BackendWindows;
  /** The body-size limit of the completion routes. */
  limit: MiddlewareHandler;
  /** POST /api/chat: the guarded door. */
  chat(c: Context): Promise<Response>;
  /** A model no backend serves: the caller's 404. */
  unknownModel(model: string): HttpError;
  /** Counts a refused request. */
  refused(): void;
}

/**
 * @example
 * mountOllamaApi(app, { fleet, windows, limit, chat: (c) => complete(c, "ollama"), unknownModel, refused: () => stats.rejected++ });
 */
export function mountOllamaApi(app: Hono, o: OllamaApiOptions): void {
  const { fleet, windows } = o;
  const backendOf = (model: string): PoolBackend => {
    const backend = fleet.pool.backendFor(model);
    if (backend === undefined) throw o.unknownModel(model);
    return backend;
  };
  const modelOf = async (c: Context): Promise<{ body: Record<string, unknown>; model: string }> => {
    const body = parseJsonObject(await c.req.text());
    // `name` is the field's name before Ollama 0.5; clients still send it.
    const model = typeof body.model === "string" ? body.model : typeof body.name === "string" ? body.name : "";
    return { body, model };
  };

  // Hono answers HEAD with the GET route's headers.
  app.get("/", (c) => c.text("Ollama is running"));
  app.get("/api/version", async (c) => {
    const backend = fleet.pool.backendFor("");
    const ollama = ollamaOf(backend);
    return ollama ? passThrough(ollama, "/api/version", "GET", undefined, c, backend!.apiKey) : c.json({ version: OLLAMA_API_VERSION });
  });
  app.get("/api/tags", async (c) => c.json({ models: (await entries(fleet, c.req.raw.signal)).map(({ entry }) => entry) }));
  app.get("/api/ps", async (c) => {
    const first = fleet.pool.backends[0];
    const single = fleet.models === undefined ? ollamaOf(first) : undefined;
    if (single) return passThrough(single, "/api/ps", "GET", undefined, c, first!.apiKey);
    const listed = await entries(fleet, c.req.raw.signal);
    const expires = new Date(Date.now() + 5 * 60_000).toISOString();
    const models = await Promise.all(
      listed.map(async ({ entry, backend, name }) => ({ ...entry, expires_at: expires, size_vram: 0, context_length: (await windows.windowOf(backend, backend.model ?? name)).contextLength ?? 0 })),
    );
    return c.json({ models });
  });
  app.post("/api/show", o.limit, async (c) => {
    const { body, model } = await modelOf(c);
    const backend = backendOf(model);
    const name = backend.model ?? model;
    const window = (await windows.windowOf(backend, name || undefined)).contextLength;
    const ollama = ollamaOf(backend);
    const shown = ollama ? await ollamaJson(ollama, "/api/show", { ...body, model: name }, backend, c.req.raw.signal) : builtShow(window);
    const info = isPlainObject(shown.model_info) ? shown.model_info : {};
    const arch = typeof info["general.architecture"] === "string" ? info["general.architecture"] : ARCH;
    if (window !== undefined) shown.model_info = { ...info, "general.architecture": arch, [`${arch}.context_length`]: window };
    return c.json(shown);
  });
  app.post("/api/chat", o.limit, async (c) => {
    const { body, model } = await modelOf(c);
    if (!Array.isArray(body.messages) || body.messages.length > 0) return o.chat(c);
    // No messages: Ollama's way to load a model (or unload it, with keep_alive 0). Nothing to guard.
    const backend = backendOf(model);
    const ollama = ollamaOf(backend);
    if (ollama) return passThrough(ollama, "/api/chat", "POST", { ...body, ...(backend.model !== undefined ? { model: backend.model } : {}) }, c, backend.apiKey);
    const reason = body.keep_alive === 0 || body.keep_alive === "0" ? "unload" : "load";
    return c.json({ model: model || fleet.defaultModel, created_at: new Date().toISOString(), message: { role: "assistant", content: "" }, done_reason: reason, done: true });
  });
  for (const path of ["/api/generate", "/api/embed", "/api/embeddings"]) {
    app.post(path, o.limit, async (c) => {
      const { body, model } = await modelOf(c);
      const backend = backendOf(model);
      const ollama = ollamaOf(backend);
      if (!ollama) {
        throw new HttpError(501, "api_error", `${path} is passed through to an Ollama backend only; model "${model}" is served by a ${backend.client.apiFormat === "openai" ? "OpenAI-compatible" : backend.client.apiFormat} backend. Use /api/chat (guarded), or the backend's own API`);
      }
      return passThrough(ollama, path, "POST", { ...body, ...(backend.model !== undefined ? { model: backend.model } : {}) }, c, backend.apiKey);
    });
  }
  for (const path of MANAGEMENT) {
    app.all(path, (c) => {
      o.refused();
      const where = fleet.pool.backends.map((b) => (b.client instanceof OllamaClient ? redactUrl(b.client.baseUrl) : undefined)).find((u) => u !== undefined);
      const instead = where === undefined ? "manage models on the backend itself" : `manage models on the Ollama backend directly (OLLAMA_HOST=${where} ollama pull …)`;
      return new HttpError(403, "invalid_request_error", `${c.req.method} ${c.req.path} is not proxied: the forge-ts proxy serves chat, not model management; ${instead}`).render("ollama");
    });
  }
}

function ollamaOf(backend: PoolBackend | undefined): OllamaClient | undefined {
  return backend?.client instanceof OllamaClient ? backend.client : undefined;
}

/** An Ollama answer as it came: status, body, and the content type its request implies. */
async function passThrough(ollama: OllamaClient, path: string, method: "GET" | "POST", json: Record<string, unknown> | undefined, c: Context, apiKey?: string): Promise<Response> {
  const streamed = json !== undefined && (path === "/api/generate" || path === "/api/chat") && json.stream !== false;
  const type = streamed ? "application/x-ndjson" : "application/json";
  try {
    const res = await ollama.forward(path, { method, json, signal: c.req.raw.signal, apiKey });
    return new Response(webStream(res.body), { status: res.statusCode, headers: { "content-type": type } });
  } catch (error) {
    // Ollama's own refusal (unknown model, bad body) reaches its client as Ollama said it.
    if (isBackendError(error) && error.statusCode >= 400) return new Response(error.body, { status: error.statusCode, headers: { "content-type": "application/json" } });
    throw toHttpError(errorRecord(error));
  }
}

/** An Ollama answer read as a JSON object (to merge the proxy's facts into). */
async function ollamaJson(ollama: OllamaClient, path: string, json: Record<string, unknown> | undefined, backend: PoolBackend, signal: AbortSignal): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await (await ollama.forward(path, { method: json === undefined ? "GET" : "POST", json, signal, apiKey: backend.apiKey })).text();
  } catch (error) {
    if (isBackendError(error) && error.statusCode === 404) throw new HttpError(404, "not_found_error", ollamaError(error.body) ?? `model not found on backend "${backend.name}"`);
    throw toHttpError(errorRecord(error));
  }
  const data = safeJson(text);
  if (!isPlainObject(data)) throw new HttpError(502, "api_error", `Backend "${backend.name}" answered ${path} with something that is not a JSON object`);
  return data;
}

/** A byte stream as a web stream; a caller gone away cancels it, which releases the backend's socket. */
function webStream(body: AsyncIterable<Uint8Array>): ReadableStream<Uint8Array> {
  const chunks = body[Symbol.asyncIterator]();
  return new ReadableStream({
    async pull(controller) {
      const next = await chunks.next();
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
    async cancel() {
      await chunks.return?.();
    },
  });
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function ollamaError(body: string): string | undefined {
  const data = safeJson(body);
  return isPlainObject(data) && typeof data.error === "string" ? data.error : undefined;
}

interface Listed {
  name: string;
  backend: PoolBackend;
  entry: Record<string, unknown>;
}

/**
 * The models as `/api/tags` entries: a single Ollama's own list; a single other backend's model
 * list; a fleet's names and aliases, each with its Ollama model's entry when an Ollama serves it.
 */
async function entries(fleet: Fleet, signal: AbortSignal): Promise<Listed[]> {
  const ollamaTags = new Map<OllamaClient, Promise<Record<string, unknown>[]>>();
  const tagsOf = (backend: PoolBackend, ollama: OllamaClient) => {
    if (!ollamaTags.has(ollama)) ollamaTags.set(ollama, ollamaJson(ollama, "/api/tags", undefined, backend, signal).then((t) => (Array.isArray(t.models) ? t.models.filter(isPlainObject) : [])));
    return ollamaTags.get(ollama)!;
  };
  if (fleet.models === undefined) {
    const backend = fleet.pool.backends[0]!;
    const ollama = ollamaOf(backend);
    if (ollama) return (await tagsOf(backend, ollama)).map((entry) => ({ name: String(entry.name ?? entry.model ?? ""), backend, entry }));
    const listed = (await listModels(backend.client, fleet.defaultModel, false, signal)) as { data: { id: string; created: number }[] };
    return listed.data.map((m) => ({ name: m.id, backend, entry: builtEntry({ id: m.id, created: m.created }) }));
  }
  return Promise.all(
    fleet.models.map(async (m): Promise<Listed> => {
      const backend = fleet.pool.backendFor(m.id)!;
      const ollama = ollamaOf(backend);
      const own = ollama && backend.model !== undefined ? (await tagsOf(backend, ollama)).find((e) => e.name === backend.model || e.model === backend.model) : undefined;
      return { name: m.id, backend, entry: own ? { ...own, name: m.id, model: m.id } : builtEntry(m) };
    }),
  );
}

const DETAILS = { parent_model: "", format: "", family: "", families: null, parameter_size: "", quantization_level: "" };

function builtEntry(m: ModelInfo): Record<string, unknown> {
  const modified = new Date(m.created ? m.created * 1000 : Date.now()).toISOString();
  return { name: m.id, model: m.id, modified_at: modified, size: 0, digest: "", details: DETAILS };
}

function builtShow(window: number | undefined): Record<string, unknown> {
  return {
    license: "",
    modelfile: "",
    parameters: window === undefined ? "" : `num_ctx ${window}`,
    template: "",
    details: DETAILS,
    model_info: { "general.architecture": ARCH },
    // Tools: the proxy gives every model tool calls (rescued from text, validated, retried).
    capabilities: ["completion", "tools"],
    modified_at: new Date().toISOString(),
  };
}
