/**
 * What the backend gets for one content part or block a caller sends, on every surface. The
 * backend is sent text only, so: text parts are their text; media (images, documents, files,
 * audio) become a one-line placeholder in place (a plain-text document or a search result is
 * read as its text), so the model knows something was there and an
 * agent's session that once pasted a screenshot is not refused on every later turn; every
 * other type (server-tool blocks, citations, anything newer than this file) carries nothing the
 * backend can use and is left out. Part types of different APIs do not collide, so one table
 * serves the Anthropic and OpenAI dialects.
 */
import { HttpError } from "../proxy-request/http-error.js";

/** Media the backend cannot be shown, by part type, as the noun its placeholder names. */
const MEDIA: Readonly<Record<string, string>> = {
  image: "image", // Anthropic
  document: "document", // Anthropic (a text-source document is read as text instead)
  image_url: "image", // OpenAI Chat Completions
  input_audio: "audio",
  file: "file",
  input_image: "image", // OpenAI Responses
  input_file: "file",
};

/**
 * The placeholder a media part becomes.
 *
 * @example
 * mediaPlaceholder("image"); // "[image omitted: the forge-ts proxy sends the model text only]"
 */
export function mediaPlaceholder(kind: string): string {
  return `[${kind} omitted: the forge-ts proxy sends the model text only]`;
}

/**
 * One part's text for the backend, or `undefined` when the part carries nothing for it.
 * A part that is not an object, or a text part whose `text` is not a string, is malformed:
 * the caller's 400, naming `where`.
 *
 * @example
 * partText({ type: "text", text: "hi" }, "messages[0].content[0]"); // "hi"
 * partText({ type: "input_audio", input_audio: { data: "…" } }, "…"); // "[audio omitted: …]"
 * partText({ type: "web_search_tool_result", content: [] }, "…"); // undefined
 */
export function partText(part: unknown, where: string, textTypes: readonly string[] = ["text"]): string | undefined {
  if (part === null || typeof part !== "object" || Array.isArray(part)) {
    throw new HttpError(400, "invalid_request_error", `${where}: a content part must be an object with a "type"`);
  }
  const p = part as { type?: unknown; text?: unknown; refusal?: unknown; source?: unknown; tool_name?: unknown };
  const type = typeof p.type === "string" ? p.type : "";
  if (textTypes.includes(type)) {
    if (typeof p.text !== "string") throw new HttpError(400, "invalid_request_error", `${where}.text: a "${type}" part needs a string text`);
    return p.text;
  }
  // What the assistant said when it refused (OpenAI) is still what it said.
  if (type === "refusal" && typeof p.refusal === "string") return p.refusal;
  if (type === "document" && isTextSource(p.source)) return p.source.data;
  // A client's own search results (Anthropic `search_result`) are text the model needs.
  if (type === "search_result") return searchResultText(part as { title?: unknown; source?: unknown; content?: unknown }, where, textTypes);
  // Anthropic tool search: the named (deferred) tool is now loaded, i.e. in the request's tools.
  if (type === "tool_reference" && typeof p.tool_name === "string") return `[tool loaded: ${p.tool_name}]`;
  const kind = MEDIA[type];
  return kind === undefined ? undefined : mediaPlaceholder(kind);
}

function searchResultText(r: { title?: unknown; source?: unknown; content?: unknown }, where: string, textTypes: readonly string[]): string {
  const head = [r.title, r.source].filter((x): x is string => typeof x === "string" && x !== "").join(" — ");
  const body = Array.isArray(r.content) ? r.content.map((c, i) => partText(c, `${where}.content[${i}]`, textTypes)).filter((t) => t !== undefined) : [];
  return [head, ...body].filter((t) => t !== "").join("\n");
}

function isTextSource(source: unknown): source is { type: "text"; data: string } {
  return typeof source === "object" && source !== null && (source as { type?: unknown }).type === "text" && typeof (source as { data?: unknown }).data === "string";
}
