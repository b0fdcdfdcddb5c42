/**
 * Emitters, one per family: the simulated model speaks these, and the property tests check
 * that every rendering parses back. Representation limits: Qwen3-Coder and GLM values follow
 * tagged-value.ts (every JSON value is representable via its JSON-encoded form); pythonic
 * renders JSON as Python literals (non-finite numbers do not exist in JSON).
 */
import { InvalidArgumentError } from "../core/errors.js";
import { kimiToolName } from "./kimi.js";
import { toPythonLiteral } from "./python-literal.js";
import { encodeTaggedValue } from "./tagged-value.js";

export type RescueFormat =
  | "fenced_json" | "embedded_json" | "name_arguments_json" | "arguments_string_json"
  | "hermes" | "qwen_coder" | "mistral_array" | "mistral_args" | "mistral_compact" | "rehearsal"
  | "llama_python_tag" | "llama_bare" | "pythonic" | "granite" | "deepseek" | "functionary"
  | "command_r" | "harmony" | "phi_functools" | "glm" | "kimi";

export interface RenderableCall {
  tool: string;
  args: Record<string, unknown>;
  id?: string;
}

type Renderer = (calls: readonly RenderableCall[]) => string;

const j = (v: unknown) => JSON.stringify(v);
const each = (f: (c: RenderableCall, i: number) => string, sep = "\n"): Renderer => (calls) => calls.map(f).join(sep);
const nameArgs = (c: RenderableCall) => ({ name: c.tool, arguments: c.args });

const RENDERERS: Record<RescueFormat, Renderer> = {
  fenced_json: each((c) => "```json\n" + j({ tool: c.tool, args: c.args }) + "\n```"),
  embedded_json: each((c) => j({ tool: c.tool, args: c.args }), " "),
  name_arguments_json: each((c) => j(nameArgs(c))),
  arguments_string_json: each((c) => j({ name: c.tool, arguments: j(c.args) })),
  hermes: each((c) => `<tool_call>\n${j(nameArgs(c))}\n</tool_call>`),
  qwen_coder: each(
    (c) =>
      `<tool_call>\n<function=${c.tool}>\n` +
      Object.entries(c.args).map(([k, v]) => `<parameter=${k}>\n${encodeTaggedValue(v)}\n</parameter>\n`).join("") +
      `</function>\n</tool_call>`,
  ),
  mistral_array: (calls) => `[TOOL_CALLS] ${j(calls.map((c) => (c.id ? { ...nameArgs(c), id: c.id } : nameArgs(c))))}`,
  mistral_args: each((c) => `[TOOL_CALLS]${c.tool}${c.id ? `[CALL_ID]${c.id}` : ""}[ARGS]${j(c.args)}`, ""),
  mistral_compact: each((c) => `[TOOL_CALLS]${c.tool}${j(c.args)}`, ""),
  rehearsal: each((c) => `${c.tool}[ARGS]${j(c.args)}`),
  llama_python_tag: each((c) => `<|python_tag|>${j({ name: c.tool, parameters: c.args })}`),
  llama_bare: each((c) => j({ name: c.tool, parameters: c.args })),
  pythonic: (calls) =>
    `[${calls.map((c) => `${c.tool}(${Object.entries(c.args).map(([k, v]) => `${k}=${toPythonLiteral(v)}`).join(", ")})`).join(", ")}]`,
  granite: (calls) => `<|tool_call|>${j(calls.map(nameArgs))}`,
  deepseek: (calls) =>
    "<｜tool▁calls▁begin｜>" +
    calls.map((c) => `<｜tool▁call▁begin｜>function<｜tool▁sep｜>${c.tool}\n\`\`\`json\n${j(c.args)}\n\`\`\`<｜tool▁call▁end｜>`).join("") +
    "<｜tool▁calls▁end｜>",
  functionary: each((c) => `>>>${c.tool}\n${j(c.args)}`),
  command_r: (calls) => "Action: ```json\n" + j(calls.map((c) => ({ tool_name: c.tool, parameters: c.args }))) + "\n```",
  harmony: each(
    (c) => `<|start|>assistant<|channel|>commentary to=functions.${c.tool} <|constrain|>json<|message|>${j(c.args)}<|call|>`,
    "",
  ),
  phi_functools: (calls) => `functools${j(calls.map(nameArgs))}`,
  glm: each(
    (c) =>
      `<tool_call>${c.tool}\n` +
      Object.entries(c.args).map(([k, v]) => `<arg_key>${k}</arg_key>\n<arg_value>${encodeTaggedValue(v)}</arg_value>\n`).join("") +
      "</tool_call>",
  ),
  kimi: (calls) =>
    "<|tool_calls_section_begin|>" +
    calls
      // Kimi ids encode the tool name, so a foreign id cannot be kept.
      .map((c, i) => `<|tool_call_begin|>${c.id !== undefined && kimiToolName(c.id) === c.tool ? c.id : `functions.${c.tool}:${i}`}<|tool_call_argument_begin|>${j(c.args)}<|tool_call_end|>`)
      .join("") +
    "<|tool_calls_section_end|>",
};

/**
 * Every format family the rescuer reads, in a stable order.
 *
 * @example
 * for (const f of RESCUE_FORMATS) console.log(f, renderToolCalls([{ tool: "t", args: {} }], f));
 */
export const RESCUE_FORMATS: readonly RescueFormat[] = Object.freeze(Object.keys(RENDERERS) as RescueFormat[]);

/**
 * Formats that can carry several calls in one output. Llama 3.x `<|python_tag|>` starts one
 * code message (its templates do not do parallel calls).
 *
 * @example
 * supportsParallel("hermes"); // true
 */
export function supportsParallel(format: RescueFormat): boolean {
  return format !== "llama_python_tag";
}

/**
 * Write calls the way a model of that family would.
 *
 * @example
 * renderToolCalls([{ tool: "get_weather", args: { city: "Paris" } }], "hermes");
 * // '<tool_call>\n{"name":"get_weather","arguments":{"city":"Paris"}}\n</tool_call>'
 */
export function renderToolCalls(calls: readonly RenderableCall[], format: RescueFormat): string {
  const render = RENDERERS[format];
  if (render === undefined) throw new InvalidArgumentError("format", `unknown rescue format ${j(format)}; use one of RESCUE_FORMATS`);
  if (!Array.isArray(calls) || calls.length === 0) throw new InvalidArgumentError("calls", "expected a non-empty array of calls");
  if (calls.length > 1 && !supportsParallel(format)) {
    throw new InvalidArgumentError("calls", `format ${format} carries one call per output, got ${calls.length}`);
  }
  return render(calls);
}
