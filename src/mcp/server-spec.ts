/**
 * Where an MCP server is and what forge-ts does with its tools: the `mcpTools(server, options)`
 * arguments, checked up front with one message per bad field (zod is the single definition of
 * each shape and of its TypeScript type).
 */
import { z } from "zod";
import { InvalidArgumentError } from "../core/errors.js";
import { MAX_TIMER_MS } from "../core/tool.js";

const stringRecord = z.record(z.string(), z.string());

const StdioServerSchema = z.object({
  /** The executable to spawn (no shell: give the arguments in `args`). */
  command: z.string().min(1, "must be a non-empty string"),
  args: z.array(z.string()).optional(),
  /** Added to a safe default environment (PATH, HOME, ...); the SDK alone would replace it. */
  env: stringRecord.optional(),
  cwd: z.string().min(1).optional(),
});

const HttpServerSchema = z.object({
  /** The server's Streamable HTTP endpoint, e.g. http://127.0.0.1:3001/mcp. */
  url: z.union([z.string(), z.instanceof(URL)]).refine((u) => isHttpUrl(u), "must be an http:// or https:// URL"),
  /** Sent with every request (e.g. `Authorization`). */
  headers: stringRecord.optional(),
});

/** A server spawned over stdio, or one reached over Streamable HTTP. */
export type McpServerSpec = z.input<typeof StdioServerSchema> | z.input<typeof HttpServerSchema>;
export type McpStdioServer = z.output<typeof StdioServerSchema>;
export type McpHttpServer = z.output<typeof HttpServerSchema>;

const TOOL_PREFIX = /^([A-Za-z_][A-Za-z0-9_.-]*)?$/;

const PositiveMs = z
  .number()
  .refine((n) => n > 0 && n <= MAX_TIMER_MS, `must be a number of milliseconds in (0, ${MAX_TIMER_MS}]`);

const PrerequisiteSchema = z.union([z.string(), z.object({ tool: z.string(), args: z.record(z.string(), z.unknown()).optional() })]);

/**
 * What `mcpTools()` does with a server's tools; every list names tools as the server does.
 *
 * @example McpToolsOptionsSchema.parse({ prefix: "fs_", deny: ["write_file"] });
 */
export const McpToolsOptionsSchema = z.object({
  /** How errors and records name the server (default: its command line or URL). */
  name: z.string().min(1).optional(),
  /** Put before every tool name, e.g. "fs_" → fs_read_text_file. */
  prefix: z.string().regex(TOOL_PREFIX, "must start with a letter or _ and hold only letters, digits, _ . -").optional(),
  /** Only these tools (server names). */
  allow: z.array(z.string()).optional(),
  /** Never these tools (server names). */
  deny: z.array(z.string()).optional(),
  /** Deadline for one call of each of these tools (the runner's `toolTimeoutMs` otherwise). */
  timeoutMs: PositiveMs.optional(),
  /** Tools to call first, per server tool name; the values name workflow tools (prefixed names). */
  prerequisites: z.record(z.string(), z.array(PrerequisiteSchema)).optional(),
  /** Deadline for starting the server and the MCP handshake (and each tools/list). Default 30,000 ms. */
  connectTimeoutMs: PositiveMs.optional(),
  /** Every call's raw answer (content parts with their data, structuredContent, isError). A throw fails the call. */
  onResult: z.custom<Function>((v) => typeof v === "function", "must be a function").optional(),
  /** Told when a tools/list_changed notification (or a restart) changed the server's tools. */
  onToolsChanged: z.custom<Function>((v) => typeof v === "function", "must be a function").optional(),
  /** Closes the servers when aborted (e.g. the run's signal). */
  signal: z.custom<AbortSignal>((v) => v instanceof AbortSignal, "must be an AbortSignal").optional(),
});

/** @example parseServerSpec({ command: process.execPath, args: ["server.js"] }) */
export function parseServerSpec(spec: unknown, argument = "server"): McpStdioServer | McpHttpServer {
  if (typeof spec !== "object" || spec === null) {
    throw new InvalidArgumentError(argument, "expected { command, args?, env?, cwd? } (stdio) or { url, headers? } (Streamable HTTP)");
  }
  const hasCommand = "command" in spec;
  const hasUrl = "url" in spec;
  if (hasCommand === hasUrl) throw new InvalidArgumentError(argument, "give either command (a stdio server) or url (Streamable HTTP), not both or neither");
  const parsed = (hasCommand ? StdioServerSchema : HttpServerSchema).strict().safeParse(spec);
  if (!parsed.success) throw issuesError(argument, parsed.error);
  return parsed.data;
}

/** @example parseToolsOptions({ prefix: "fs_", allow: ["read_text_file"] }) */
export function parseToolsOptions(options: unknown): z.output<typeof McpToolsOptionsSchema> {
  const parsed = McpToolsOptionsSchema.strict().safeParse(options ?? {});
  if (!parsed.success) throw issuesError("options", parsed.error);
  return parsed.data;
}

/** Whether a server spec is a stdio one. @example isStdio({ command: "node" }); // true */
export function isStdio(spec: McpStdioServer | McpHttpServer): spec is McpStdioServer {
  return "command" in spec;
}

/**
 * How messages name a server when the caller gave no name: its command line or URL, shortened.
 *
 * @example defaultServerName({ url: "http://127.0.0.1:3001/mcp" }); // "http://127.0.0.1:3001/mcp"
 */
export function defaultServerName(spec: McpStdioServer | McpHttpServer): string {
  const full = isStdio(spec) ? [spec.command, ...(spec.args ?? [])].join(" ") : String(spec.url);
  return full.length > 80 ? `${full.slice(0, 77)}...` : full;
}

function isHttpUrl(value: string | URL): boolean {
  try {
    const { protocol } = new URL(value);
    return protocol === "http:" || protocol === "https:";
  } catch {
    return false;
  }
}

function issuesError(argument: string, error: z.ZodError): InvalidArgumentError {
  const lines = error.issues.map((i) => `${i.path.length > 0 ? i.path.join(".") : "(value)"}: ${i.message}`);
  return new InvalidArgumentError(argument, lines.join("; "));
}
