/**
 * One MCP tool as a forge tool. The definition comes from `defineTool({ jsonSchema })`, so the
 * model gets the server's description and input schema and arguments are checked by the same
 * ajv path as any JSON Schema tool before the server sees them. The object a Workflow holds
 * stays the same for the connection's life, but its description, spec and validator read the
 * latest listing: a tools/list_changed that edits this tool reaches the model at its next
 * inference and the argument check at the next call. A tool the server stopped listing fails
 * each call with McpToolError instead of reaching the server.
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { McpToolError } from "../core/errors.js";
import { defineTool, type AnyToolDef, type JSONSchema, type Prerequisite, type ToolExecuteContext } from "../core/tool.js";

export interface McpToolBinding {
  server: string;
  /** The tool's name on the server. */
  remoteName: string;
  /** Its name in the workflow (the prefix applied). */
  name: string;
  prerequisites: Prerequisite[];
  timeoutMs?: number;
  call(args: Record<string, unknown>, context: ToolExecuteContext): Promise<unknown>;
}

/**
 * @example
 * const t = new McpTool({ server: "fs", remoteName: "read", name: "fs_read", prerequisites: [], call }, listedTool);
 * new Workflow({ name: "w", tools: { fs_read: t.tool, answer }, terminalTool: "answer" });
 */
export class McpTool {
  /** What workflows hold: same object throughout, reading the latest definition. */
  readonly tool: AnyToolDef;
  #def: AnyToolDef;
  #listed: string;
  #offered = true;

  /** Throws ToolDefinitionError when the listing is unusable (a name or schema forge-ts cannot take). */
  constructor(
    readonly binding: McpToolBinding,
    listed: Tool,
  ) {
    this.#def = define(binding, listed);
    this.#listed = listingKey(listed);
    const self = this;
    this.tool = Object.freeze({
      name: binding.name,
      get description() {
        return self.#def.description;
      },
      get spec() {
        return self.#def.spec;
      },
      prerequisites: this.#def.prerequisites,
      ...(binding.timeoutMs !== undefined ? { timeoutMs: binding.timeoutMs } : {}),
      validateArgs: (args: unknown) => self.#def.validateArgs(args),
      execute: async (args: Record<string, unknown>, context: ToolExecuteContext) => {
        if (!self.#offered) {
          throw new McpToolError(binding.server, binding.remoteName, `the MCP server "${binding.server}" no longer offers "${binding.remoteName}" (its tool list changed)`);
        }
        return binding.call(args, context);
      },
    });
  }

  get offered(): boolean {
    return this.#offered;
  }

  /**
   * Take a new listing of this tool; true when its description or schema changed (or it is
   * offered again). Throws ToolDefinitionError, keeping the old definition, when unusable.
   */
  update(listed: Tool): boolean {
    const key = listingKey(listed);
    const changed = key !== this.#listed || !this.#offered;
    if (key !== this.#listed) this.#def = define(this.binding, listed);
    this.#listed = key;
    this.#offered = true;
    return changed;
  }

  /** The server stopped listing it. */
  withdraw(): void {
    this.#offered = false;
  }
}

function define(binding: McpToolBinding, listed: Tool): AnyToolDef {
  return defineTool({
    name: binding.name,
    description: listed.description ?? listed.title ?? listed.annotations?.title ?? "",
    jsonSchema: inputSchemaOf(listed),
    prerequisites: binding.prerequisites,
    execute: binding.call,
  });
}

/**
 * The input schema as the model and ajv get it. `$schema` goes: the model does not need it, and
 * ajv (draft-07) refuses a meta-schema it does not know, such as 2020-12's.
 */
function inputSchemaOf(listed: Tool): JSONSchema {
  const { $schema: _ignored, ...schema } = listed.inputSchema as JSONSchema;
  return schema;
}

function listingKey(listed: Tool): string {
  return JSON.stringify([listed.description, listed.title, listed.inputSchema]);
}
