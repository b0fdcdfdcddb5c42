/**
 * MCP servers named on the command line: `--mcp "<command …>"`, `--mcp-url <url>` and an
 * `--mcp-config` file in the shape Claude Desktop and IDEs use:
 *
 *   { "mcpServers": { "fs": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."] },
 *                     "docs": { "url": "http://127.0.0.1:3001/mcp", "headers": { "Authorization": "Bearer …" } } } }
 *
 * Besides `command`/`args`/`env`/`cwd` and `url`/`headers`, an entry may carry `type` ("stdio",
 * "http"; "sse" is refused), `disabled: true` (skipped) and forge-ts's own `prefix`, `allow`,
 * `deny` and `timeoutMs`; other keys (an IDE's `autoApprove`, ...) are ignored.
 */
import { parse as parseJsonc, printParseErrorCode, type ParseError } from "jsonc-parser";
import { InvalidArgumentError } from "../core/errors.js";
import { isPlainObject } from "../core/json-value.js";
import { parseServerSpec, parseToolsOptions, type McpHttpServer, type McpStdioServer } from "./server-spec.js";

/** One server to connect, with what forge-ts does with its tools. */
export interface NamedMcpServer {
  name: string;
  spec: McpStdioServer | McpHttpServer;
  options: { prefix?: string; allow?: string[]; deny?: string[]; timeoutMs?: number };
}

const SPEC_KEYS = ["command", "args", "env", "cwd", "url", "headers"] as const;
const OPTION_KEYS = ["prefix", "allow", "deny", "timeoutMs"] as const;
const TYPES = ["stdio", "http", "streamable-http", "streamableHttp"];

/**
 * The servers of an `mcpServers` config (JSON, comments allowed), in file order.
 *
 * @example
 * parseMcpConfig('{ "mcpServers": { "fs": { "command": "node", "args": ["fs.js", "."] } } }', "mcp.json");
 */
export function parseMcpConfig(text: string, file: string): NamedMcpServer[] {
  const argument = `--mcp-config ${file}`;
  const errors: ParseError[] = [];
  const config: unknown = parseJsonc(text, errors, { allowTrailingComma: true });
  if (errors.length > 0) {
    const first = errors[0]!;
    throw new InvalidArgumentError(argument, `not JSON: ${printParseErrorCode(first.error)} at offset ${first.offset}`);
  }
  if (!isPlainObject(config) || !isPlainObject(config.mcpServers)) {
    throw new InvalidArgumentError(argument, 'expected { "mcpServers": { "<name>": { "command", "args", "env" } | { "url", "headers" } } }');
  }
  const out: NamedMcpServer[] = [];
  for (const [name, entry] of Object.entries(config.mcpServers)) {
    const where = `${argument}: mcpServers.${name}`;
    if (!isPlainObject(entry)) throw new InvalidArgumentError(where, "expected an object");
    if (entry.disabled === true) continue;
    if (entry.type !== undefined && !TYPES.includes(entry.type as string)) {
      throw new InvalidArgumentError(where, `type ${JSON.stringify(entry.type)} is not supported; use a stdio command or a Streamable HTTP url ("type": "http")`);
    }
    const spec = parseServerSpec(pick(entry, SPEC_KEYS), where);
    const options = parseToolsOptions(pick(entry, OPTION_KEYS));
    out.push({ name, spec, options });
  }
  return out;
}

/**
 * The servers of `--mcp` and `--mcp-url` flags (named mcp-1, mcp-2, … and mcp-url-1, …) and a
 * config file's, checked for duplicate names.
 *
 * @example
 * serversFromFlags({ mcp: ["node fs.js /tmp"], mcpUrl: ["http://127.0.0.1:3001/mcp"] });
 */
export function serversFromFlags(flags: { mcp?: string[]; mcpUrl?: string[]; config?: NamedMcpServer[] }): NamedMcpServer[] {
  const out: NamedMcpServer[] = [...(flags.config ?? [])];
  (flags.mcp ?? []).forEach((line, i) => {
    const [command, ...args] = splitCommandLine(line, "--mcp");
    if (command === undefined) throw new InvalidArgumentError("--mcp", "expected a command, e.g. --mcp \"npx -y @modelcontextprotocol/server-filesystem .\"");
    out.push({ name: `mcp-${i + 1}`, spec: parseServerSpec({ command, args }, "--mcp"), options: {} });
  });
  (flags.mcpUrl ?? []).forEach((url, i) => {
    out.push({ name: `mcp-url-${i + 1}`, spec: parseServerSpec({ url }, "--mcp-url"), options: {} });
  });
  const seen = new Set<string>();
  for (const { name } of out) {
    if (seen.has(name)) throw new InvalidArgumentError("--mcp-config", `server name "${name}" is also the name of an --mcp/--mcp-url flag's server; rename it`);
    seen.add(name);
  }
  return out;
}

/**
 * A command line split into words the way a POSIX shell would, without expanding anything:
 * whitespace separates words, '…' is literal, "…" takes \" \\ \$ \` escapes, \x outside quotes
 * is x. No shell runs the command.
 *
 * @example splitCommandLine(`node "my server.js" --root '/tmp/a b'`); // ["node", "my server.js", "--root", "/tmp/a b"]
 */
export function splitCommandLine(line: string, argument = "command"): string[] {
  const words: string[] = [];
  let word: string | undefined;
  let quote: "'" | '"' | undefined;
  const add = (text: string) => (word = (word ?? "") + text);
  for (let i = 0; i < line.length; i++) {
    const c = line.charAt(i);
    const next = line.charAt(i + 1);
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else add(c);
    } else if (quote === '"') {
      if (c === '"') quote = undefined;
      else if (c === "\\" && next !== "" && '"\\$`'.includes(next)) add(line.charAt(++i));
      else add(c);
    } else if (/\s/.test(c)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (c === "'" || c === '"') {
      add("");
      quote = c;
    } else if (c === "\\" && next !== "") {
      add(line.charAt(++i));
    } else {
      add(c);
    }
  }
  if (quote) throw new InvalidArgumentError(argument, `unterminated ${quote} in ${JSON.stringify(line)}`);
  if (word !== undefined) words.push(word);
  return words;
}

function pick(entry: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter((k) => entry[k] !== undefined).map((k) => [k, entry[k]]));
}
