/**
 * A declarative workflow: tools, required steps, terminal tool(s) and the system prompt.
 * Every check the seed makes at construction time is made here, so a bad definition fails
 * before any model is called.
 */
import { WorkflowDefinitionError } from "./errors.js";
import { isPlainObject } from "./json-value.js";
import { prerequisiteName, type AnyToolDef, type ToolSpec } from "./tool.js";

export interface WorkflowOptions {
  name: string;
  description?: string;
  /** Keyed by tool name; each key must equal its tool's name. */
  tools: Record<string, AnyToolDef>;
  /** Tools that must succeed before a terminal tool may run. */
  requiredSteps?: string[];
  /** The tool (or tools) whose success ends the run. */
  terminalTool: string | string[];
  /** May contain `{placeholders}` filled from `promptVars`. */
  systemPromptTemplate?: string;
}

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/**
 * The `{placeholders}` of a workflow's system prompt, each once, in order: the `promptVars` a
 * run of it must give.
 *
 * @example
 * promptPlaceholders(new Workflow({ ..., systemPromptTemplate: "You help {user} at {company}." })); // ["user", "company"]
 */
export function promptPlaceholders(workflow: Pick<Workflow, "systemPromptTemplate">): string[] {
  return [...new Set(Array.from(workflow.systemPromptTemplate.matchAll(PLACEHOLDER), (m) => m[1]!))];
}

/**
 * @example
 * const wf = new Workflow({ name: "weather", tools: { get_weather: weather, answer },
 *   requiredSteps: ["get_weather"], terminalTool: "answer",
 *   systemPromptTemplate: "You help with weather in {region}." });
 */
export class Workflow {
  readonly name: string;
  readonly description: string;
  readonly tools: Readonly<Record<string, AnyToolDef>>;
  readonly requiredSteps: readonly string[];
  readonly terminalTools: readonly string[];
  readonly systemPromptTemplate: string;

  constructor(options: WorkflowOptions) {
    if (!isPlainObject(options)) throw new WorkflowDefinitionError("options must be an object");
    const { name } = options;
    if (typeof name !== "string" || name.length === 0) throw new WorkflowDefinitionError("name must be a non-empty string");
    const fail = (msg: string): never => {
      throw new WorkflowDefinitionError(msg, name);
    };
    if (!isPlainObject(options.tools) || Object.keys(options.tools).length === 0) fail("tools must be a non-empty object");
    const tools = options.tools;
    for (const [key, tool] of Object.entries(tools)) {
      const shapeProblem = toolShapeProblem(tool);
      if (shapeProblem) fail(`tools.${key} is not a tool (${shapeProblem}; use defineTool)`);
      if (key !== tool.name) fail(`tool key "${key}" does not match the tool's name "${tool.name}"`);
    }
    const required = options.requiredSteps ?? [];
    if (!Array.isArray(required)) fail("requiredSteps must be an array of tool names");
    for (const step of required) {
      if (!Object.hasOwn(tools, step)) fail(`required step "${step}" is not one of the tools [${Object.keys(tools).join(", ")}]`);
    }
    if (new Set(required).size !== required.length) fail("requiredSteps lists a tool twice");
    const terminal = typeof options.terminalTool === "string" ? [options.terminalTool] : options.terminalTool;
    if (!Array.isArray(terminal) || terminal.length === 0) fail("terminalTool must be a tool name or a non-empty list");
    for (const t of terminal) {
      if (!Object.hasOwn(tools, t)) fail(`terminal tool "${t}" is not one of the tools [${Object.keys(tools).join(", ")}]`);
      if (required.includes(t)) fail(`terminal tool "${t}" cannot also be a required step`);
    }
    for (const tool of Object.values(tools)) {
      for (const p of tool.prerequisites) {
        const pn = prerequisiteName(p);
        if (!Object.hasOwn(tools, pn)) fail(`prerequisite "${pn}" of tool "${tool.name}" is not one of the tools`);
        if (pn === tool.name) fail(`tool "${tool.name}" cannot be its own prerequisite`);
      }
    }
    const cycle = prerequisiteCycle(tools);
    if (cycle) fail(`prerequisites form a cycle (${cycle.join(" → ")}): none of these tools could ever run`);
    const terminalSet = new Set(terminal);
    for (const step of required) {
      const chain = prerequisitePathTo(tools, step, terminalSet);
      if (chain) {
        fail(
          `required step "${step}" needs terminal tool "${chain.at(-1)}" first (${chain.join(" → ")}), ` +
            "but a terminal tool may only run after every required step: the run could never finish",
        );
      }
    }
    const template = options.systemPromptTemplate ?? "";
    if (typeof template !== "string") fail("systemPromptTemplate must be a string");

    this.name = name;
    this.description = options.description ?? "";
    this.tools = Object.freeze({ ...tools });
    this.requiredSteps = Object.freeze([...required]);
    this.terminalTools = Object.freeze([...new Set(terminal)]);
    this.systemPromptTemplate = template;
  }

  get toolNames(): string[] {
    return Object.keys(this.tools);
  }

  isTerminal(toolName: string): boolean {
    return this.terminalTools.includes(toolName);
  }

  /** Render the system prompt; a placeholder without a value is an error, not an empty string. */
  buildSystemPrompt(vars: Record<string, string> = {}): string {
    const missing = new Set<string>();
    const out = this.systemPromptTemplate.replace(PLACEHOLDER, (whole, key: string) => {
      if (Object.hasOwn(vars, key)) return String(vars[key]);
      missing.add(key);
      return whole;
    });
    if (missing.size > 0) {
      throw new WorkflowDefinitionError(`system prompt placeholders without a value: ${[...missing].join(", ")}`, this.name);
    }
    return out;
  }

  getToolSpecs(): ToolSpec[] {
    return Object.values(this.tools).map((t) => t.spec);
  }

  getTool(name: string): AnyToolDef {
    const tool = Object.hasOwn(this.tools, name) ? this.tools[name] : undefined;
    if (!tool) throw new WorkflowDefinitionError(`no tool named "${name}"`, this.name);
    return tool;
  }
}

/** Why a value is not a tool definition (what defineTool returns), or undefined. */
function toolShapeProblem(tool: unknown): string | undefined {
  if (!isPlainObject(tool)) return "not an object";
  if (typeof tool.name !== "string") return "no name";
  if (typeof tool.execute !== "function") return "no execute function";
  if (typeof tool.validateArgs !== "function") return "no validateArgs function";
  if (!isPlainObject(tool.spec) || typeof tool.spec.name !== "string") return "no spec";
  if (!Array.isArray(tool.prerequisites)) return "no prerequisites array";
  return undefined;
}

const prerequisiteNames = (tool: AnyToolDef | undefined): string[] => (tool ? tool.prerequisites.map(prerequisiteName) : []);

/** One prerequisite cycle as a closed path of tool names, or undefined (iterative DFS). */
function prerequisiteCycle(tools: Record<string, AnyToolDef>): string[] | undefined {
  const state = new Map<string, "open" | "closed">();
  for (const root of Object.keys(tools)) {
    if (state.has(root)) continue;
    const path: string[] = [];
    const stack: { name: string; next: string[] }[] = [];
    const enter = (name: string) => {
      state.set(name, "open");
      path.push(name);
      stack.push({ name, next: prerequisiteNames(tools[name]) });
    };
    enter(root);
    while (stack.length > 0) {
      const top = stack.at(-1)!;
      const next = top.next.pop();
      if (next === undefined) {
        state.set(top.name, "closed");
        stack.pop();
        path.pop();
      } else if (state.get(next) === "open") {
        return [...path.slice(path.indexOf(next)), next];
      } else if (!state.has(next)) {
        enter(next);
      }
    }
  }
  return undefined;
}

/** The prerequisite chain from `start` to the first tool in `targets` (breadth-first), or undefined. */
function prerequisitePathTo(tools: Record<string, AnyToolDef>, start: string, targets: ReadonlySet<string>): string[] | undefined {
  const from = new Map<string, string>();
  const queue = [start];
  const seen = new Set(queue);
  for (let i = 0; i < queue.length; i++) {
    const name = queue[i]!;
    for (const p of prerequisiteNames(tools[name])) {
      if (seen.has(p)) continue;
      seen.add(p);
      from.set(p, name);
      if (targets.has(p)) {
        const chain = [p];
        for (let at = p; at !== start; ) chain.push((at = from.get(at)!));
        return chain.reverse();
      }
      queue.push(p);
    }
  }
  return undefined;
}
