/**
 * What the scripted model reads from a request, whichever API it came in: the tools on offer and
 * the conversation as plain turns. One reading per wire dialect (Ollama /api/chat, Chat
 * Completions, Anthropic Messages, Responses), so the turn policy is written once.
 */

export type Dialect = "ollama" | "openai" | "anthropic" | "responses";

export interface ToolView {
  name: string;
  /** JSON Schema of the arguments ({} when the tool has none, e.g. a freeform tool). */
  schema: Record<string, unknown>;
}

export interface CallView {
  name: string;
  args: unknown;
}

export interface Turn {
  role: "system" | "user" | "assistant" | "tool";
  text: string;
  calls: CallView[];
  /** A tool result the client itself flagged as failed (Anthropic `is_error`). */
  isError?: boolean;
}

export interface RequestView {
  tools: ToolView[];
  turns: Turn[];
  /** The answer format asked for: Ollama /api/chat's `format` ("json" or a JSON Schema). */
  format?: unknown;
}

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const textOf = (content: unknown): string => {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return content === undefined || content === null ? "" : JSON.stringify(content);
  return content.map((p: Json) => (typeof p === "string" ? p : typeof p.text === "string" ? p.text : typeof p.content === "string" || Array.isArray(p.content) ? textOf(p.content) : "")).join("");
};

const parseArgs = (args: unknown): unknown => {
  if (typeof args !== "string") return args;
  try {
    return JSON.parse(args);
  } catch {
    return args;
  }
};

const turn = (role: Turn["role"], text: string, calls: CallView[] = [], isError?: boolean): Turn => ({ role, text, calls, ...(isError ? { isError } : {}) });

function chatView(body: Json): RequestView {
  const tools = (body.tools ?? []).map((t: Json) => ({ name: t.function?.name ?? t.name, schema: t.function?.parameters ?? {} }));
  const turns = (body.messages ?? []).map((m: Json) =>
    turn(m.role === "developer" ? "system" : m.role, textOf(m.content), (m.tool_calls ?? []).map((c: Json) => ({ name: c.function?.name, args: parseArgs(c.function?.arguments) }))),
  );
  return { tools, turns };
}

function anthropicView(body: Json): RequestView {
  const tools = (body.tools ?? []).filter((t: Json) => t.input_schema).map((t: Json) => ({ name: t.name, schema: t.input_schema }));
  const turns: Turn[] = body.system === undefined ? [] : [turn("system", textOf(body.system))];
  for (const m of body.messages ?? []) {
    const blocks: Json[] = typeof m.content === "string" ? [{ type: "text", text: m.content }] : (m.content ?? []);
    const results = blocks.filter((b) => b.type === "tool_result");
    for (const r of results) turns.push(turn("tool", textOf(r.content), [], r.is_error === true));
    const text = textOf(blocks.filter((b) => b.type === "text"));
    const calls = blocks.filter((b) => b.type === "tool_use").map((b) => ({ name: b.name, args: b.input }));
    if (text !== "" || calls.length > 0 || results.length === 0) turns.push(turn(m.role, text, calls));
  }
  return { tools, turns };
}

function responsesTools(tools: Json[]): ToolView[] {
  return tools.flatMap((t): ToolView[] => {
    if (t.type === "namespace") return responsesTools(t.tools ?? []).map((inner) => ({ ...inner, name: `${t.name}${inner.name}` }));
    if (t.type === "function") return [{ name: t.name, schema: t.parameters ?? {} }];
    if (t.type === "custom") return [{ name: t.name, schema: {} }];
    return [];
  });
}

function responsesView(body: Json): RequestView {
  const turns: Turn[] = body.instructions ? [turn("system", String(body.instructions))] : [];
  const items: Json[] = typeof body.input === "string" ? [{ type: "message", role: "user", content: body.input }] : (body.input ?? []);
  for (const item of items) {
    const type = item.type ?? "message";
    if (type === "message") turns.push(turn(item.role === "developer" ? "system" : item.role, textOf(item.content)));
    else if (type === "function_call") turns.push(turn("assistant", "", [{ name: item.name, args: parseArgs(item.arguments) }]));
    else if (type === "custom_tool_call") turns.push(turn("assistant", "", [{ name: item.name, args: item.input }]));
    else if (type === "function_call_output" || type === "custom_tool_call_output") turns.push(turn("tool", textOf(item.output)));
  }
  // Consecutive call items are one assistant turn, as a model emits them.
  const merged: Turn[] = [];
  for (const t of turns) {
    const last = merged.at(-1);
    if (last?.role === "assistant" && t.role === "assistant" && t.text === "") last.calls.push(...t.calls);
    else merged.push(t);
  }
  return { tools: responsesTools(body.tools ?? []), turns: merged };
}

/**
 * @example
 * viewRequest("openai", { messages: [{ role: "user", content: "hi" }] }); // { tools: [], turns: [{ role: "user", text: "hi", calls: [] }] }
 */
export function viewRequest(dialect: Dialect, body: Json): RequestView {
  if (dialect === "anthropic") return anthropicView(body);
  if (dialect === "responses") return responsesView(body);
  const view = chatView(body);
  return dialect === "ollama" && body.format !== undefined ? { ...view, format: body.format } : view;
}
