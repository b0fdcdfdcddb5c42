/**
 * A server's tools as forge tools, and what a new listing changes. The record handed out at
 * connect time is fixed: a Workflow copies its tools when it is built, so a name added later
 * could never reach a running workflow. A listing therefore updates existing tools in place
 * (description, schema), withdraws the ones no longer listed (their calls fail as tool errors),
 * and reports new names, which `latest()` includes for a Workflow built afterwards.
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { describeError, InvalidArgumentError } from "../core/errors.js";
import type { AnyToolDef, Prerequisite, ToolExecuteContext } from "../core/tool.js";
import { McpTool } from "./mcp-tool.js";

/** What one listing changed, by workflow tool name. */
export interface McpToolsChange {
  server: string;
  /** Listed now and not in the tool set's `tools` (take them with `latest()` for a new Workflow). */
  added: string[];
  /** No longer listed; their calls fail with McpToolError until the server lists them again. */
  removed: string[];
  /** Existing tools whose description or input schema changed (updated in place), or listed again. */
  changed: string[];
  /** Listed but unusable (a name or schema forge-ts cannot take), with the reason. */
  skipped: { tool: string; reason: string }[];
}

export interface CatalogOptions {
  server: string;
  prefix: string;
  allow?: string[];
  deny?: string[];
  prerequisites?: Record<string, Prerequisite[]>;
  timeoutMs?: number;
  call(remoteName: string, toolName: string, args: Record<string, unknown>, context: ToolExecuteContext): Promise<unknown>;
}

/**
 * @example
 * const catalog = new ToolCatalog({ server: "fs", prefix: "fs_", call }, (await client.listTools()).tools);
 * catalog.record.fs_read_text_file; // later: catalog.apply(newListing) → { added, removed, changed, skipped }
 */
export class ToolCatalog {
  /** The tools at connect time, by workflow name: fixed keys, tools updated in place. */
  readonly record: Readonly<Record<string, AnyToolDef>>;
  readonly #byRemote = new Map<string, McpTool>();
  #skipped: { tool: string; reason: string }[] = [];

  constructor(
    readonly o: CatalogOptions,
    listed: Tool[],
  ) {
    checkNames(o, listed);
    const change = this.apply(listed);
    this.#skipped = change.skipped;
    this.record = Object.freeze(Object.fromEntries([...this.#byRemote.values()].map((t) => [t.tool.name, t.tool])));
  }

  /** Listed at connect time or since, but unusable. */
  get skipped(): readonly { tool: string; reason: string }[] {
    return this.#skipped;
  }

  /** Listed now, not in `record`. */
  get added(): string[] {
    return this.#offered().filter((t) => !Object.hasOwn(this.record, t.tool.name)).map((t) => t.tool.name);
  }

  /** In `record`, not listed now. */
  get removed(): string[] {
    return [...this.#byRemote.values()].filter((t) => !t.offered && Object.hasOwn(this.record, t.tool.name)).map((t) => t.tool.name);
  }

  /** Every tool listed now, new names included. */
  latest(): Record<string, AnyToolDef> {
    return Object.fromEntries(this.#offered().map((t) => [t.tool.name, t.tool]));
  }

  /** Take a listing: update, withdraw, add. */
  apply(listed: Tool[]): Omit<McpToolsChange, "server"> {
    const change: Omit<McpToolsChange, "server"> = { added: [], removed: [], changed: [], skipped: [] };
    const seen = new Set<string>();
    for (const tool of listed) {
      if (!this.#admits(tool.name) || seen.has(tool.name)) continue;
      seen.add(tool.name);
      const name = `${this.o.prefix}${tool.name}`;
      const known = this.#byRemote.get(tool.name);
      try {
        if (known) {
          if (known.update(tool)) change.changed.push(name);
        } else {
          this.#byRemote.set(tool.name, new McpTool(this.#binding(tool.name, name), tool));
          change.added.push(name);
        }
      } catch (error) {
        change.skipped.push({ tool: name, reason: describeError(error) });
      }
    }
    for (const [remote, tool] of this.#byRemote) {
      if (!seen.has(remote) && tool.offered) {
        tool.withdraw();
        change.removed.push(tool.tool.name);
      }
    }
    if (change.skipped.length > 0) this.#skipped = [...this.#skipped.filter((s) => !change.skipped.some((c) => c.tool === s.tool)), ...change.skipped];
    return change;
  }

  #offered(): McpTool[] {
    return [...this.#byRemote.values()].filter((t) => t.offered);
  }

  #admits(remoteName: string): boolean {
    return (this.o.allow === undefined || this.o.allow.includes(remoteName)) && !(this.o.deny ?? []).includes(remoteName);
  }

  #binding(remoteName: string, name: string) {
    return {
      server: this.o.server,
      remoteName,
      name,
      prerequisites: this.o.prerequisites?.[remoteName] ?? [],
      ...(this.o.timeoutMs !== undefined ? { timeoutMs: this.o.timeoutMs } : {}),
      call: (args: Record<string, unknown>, context: ToolExecuteContext) => this.o.call(remoteName, name, args, context),
    };
  }
}

/** `allow`, `deny` and `prerequisites` name the server's tools: a name it does not list is a typo. */
function checkNames(o: CatalogOptions, listed: Tool[]): void {
  const offered = new Set(listed.map((t) => t.name));
  const lists: [string, string[]][] = [
    ["allow", o.allow ?? []],
    ["deny", o.deny ?? []],
    ["prerequisites", Object.keys(o.prerequisites ?? {})],
  ];
  for (const [option, names] of lists) {
    const unknown = names.filter((n) => !offered.has(n));
    if (unknown.length > 0) {
      throw new InvalidArgumentError(
        `options.${option}`,
        `${unknown.map((n) => `"${n}"`).join(", ")} ${unknown.length === 1 ? "is not a tool" : "are not tools"} of MCP server "${o.server}" (it lists: ${[...offered].join(", ") || "none"}); use the server's names, without the prefix`,
      );
    }
  }
}
