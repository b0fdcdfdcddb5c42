/**
 * The proxy's four front doors as data, for suites that send the same conversation through each:
 * the request body in the door's own dialect (a user turn, optionally an earlier assistant call
 * and its result, and a get_weather tool), and readers for the door's answer and error shapes.
 */
import { WEATHER_SCHEMA } from "./harness.js";

/** An earlier call in the history: its arguments exactly as the door carries them. */
export interface HistoryCall {
  /** OpenAI/Responses/Ollama `arguments` (a string, or an Ollama object), Anthropic `input`. */
  args: unknown;
}

export interface Door {
  name: "openai" | "anthropic" | "responses" | "ollama";
  path: string;
  body(options?: { schema?: Record<string, unknown>; call?: HistoryCall }): Record<string, unknown>;
  /** The field a history call's arguments sit in, as the proxy names it in a 400. */
  argsField: string;
  /** The first call of an unstreamed answer, arguments decoded. */
  answerCall(body: Record<string, unknown>): { name: string; args: unknown } | undefined;
  errorMessage(body: Record<string, unknown>): string;
}

const ask = "Weather in Oslo?";
const openaiTool = (schema: Record<string, unknown>) => ({ type: "function", function: { name: "get_weather", description: "Weather", parameters: schema } });
const decoded = (args: unknown): unknown => (typeof args === "string" ? JSON.parse(args) : args);

export const DOORS: readonly Door[] = [
  {
    name: "openai",
    path: "/v1/chat/completions",
    argsField: "messages[1].tool_calls[0].function.arguments",
    body: ({ schema = WEATHER_SCHEMA, call } = {}) => ({
      model: "qwen3:8b",
      tools: [openaiTool(schema)],
      messages: [
        { role: "user", content: ask },
        ...(call ? [{ role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "get_weather", arguments: call.args } }] }, { role: "tool", tool_call_id: "c1", content: "sunny" }] : []),
      ],
    }),
    answerCall: (b) => {
      const fn = (b as { choices: { message: { tool_calls?: { function: { name: string; arguments: string } }[] } }[] }).choices[0]!.message.tool_calls?.[0]?.function;
      return fn && { name: fn.name, args: decoded(fn.arguments) };
    },
    errorMessage: (b) => (b as { error: { message: string } }).error.message,
  },
  {
    name: "anthropic",
    path: "/v1/messages",
    argsField: "messages[1].content[0].input",
    body: ({ schema = WEATHER_SCHEMA, call } = {}) => ({
      model: "qwen3:8b",
      max_tokens: 256,
      tools: [{ name: "get_weather", description: "Weather", input_schema: schema }],
      messages: [
        { role: "user", content: ask },
        ...(call
          ? [
              { role: "assistant", content: [{ type: "tool_use", id: "c1", name: "get_weather", input: call.args }] },
              { role: "user", content: [{ type: "tool_result", tool_use_id: "c1", content: "sunny" }] },
            ]
          : []),
      ],
    }),
    answerCall: (b) => {
      const use = (b as { content: { type: string; name: string; input: unknown }[] }).content.find((c) => c.type === "tool_use");
      return use && { name: use.name, args: use.input };
    },
    errorMessage: (b) => (b as { error: { message: string } }).error.message,
  },
  {
    name: "responses",
    path: "/v1/responses",
    argsField: "input[1].arguments",
    body: ({ schema = WEATHER_SCHEMA, call } = {}) => ({
      model: "qwen3:8b",
      tools: [{ type: "function", name: "get_weather", description: "Weather", parameters: schema }],
      input: [
        { type: "message", role: "user", content: ask },
        ...(call ? [{ type: "function_call", call_id: "c1", name: "get_weather", arguments: call.args }, { type: "function_call_output", call_id: "c1", output: "sunny" }] : []),
      ],
    }),
    answerCall: (b) => {
      const item = (b as { output: { type: string; name: string; arguments: string }[] }).output.find((o) => o.type === "function_call");
      return item && { name: item.name, args: decoded(item.arguments) };
    },
    errorMessage: (b) => (b as { error: { message: string } }).error.message,
  },
  {
    name: "ollama",
    path: "/api/chat",
    argsField: "messages[1].tool_calls[0].function.arguments",
    body: ({ schema = WEATHER_SCHEMA, call } = {}) => ({
      model: "qwen3:8b",
      stream: false,
      tools: [openaiTool(schema)],
      messages: [
        { role: "user", content: ask },
        ...(call ? [{ role: "assistant", content: "", tool_calls: [{ function: { name: "get_weather", arguments: call.args } }] }, { role: "tool", tool_name: "get_weather", content: "sunny" }] : []),
      ],
    }),
    answerCall: (b) => {
      const fn = (b as { message: { tool_calls?: { function: { name: string; arguments: unknown } }[] } }).message.tool_calls?.[0]?.function;
      return fn && { name: fn.name, args: fn.arguments };
    },
    errorMessage: (b) => (b as { error: string }).error,
  },
];

/**
 * @example
 * const res = await postDoor(rig.url, DOORS[0], DOORS[0].body());
 */
export function postDoor(url: string, door: Door, body: Record<string, unknown> | string): Promise<Response> {
  return fetch(`${url}${door.path}`, { method: "POST", headers: { "content-type": "application/json" }, body: typeof body === "string" ? body : JSON.stringify(body) });
}
