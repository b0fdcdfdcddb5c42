/** The command-line side of MCP servers: `--mcp` command lines, `--mcp-config` files, option checks. */
import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../src/index.js";
import { parseMcpConfig, serversFromFlags, splitCommandLine } from "../../src/mcp/server-config.js";
import { parseServerSpec, parseToolsOptions } from "../../src/mcp/server-spec.js";

describe("splitCommandLine", () => {
  it("splits like a shell, expanding nothing", () => {
    expect(splitCommandLine(`node "my server.js" --root '/tmp/a b'`)).toEqual(["node", "my server.js", "--root", "/tmp/a b"]);
    expect(splitCommandLine(`  npx -y   @scope/pkg  `)).toEqual(["npx", "-y", "@scope/pkg"]);
    expect(splitCommandLine(`a\\ b "q\\"x" 'l\\n' "" $HOME`)).toEqual(["a b", 'q"x', "l\\n", "", "$HOME"]);
    expect(splitCommandLine("")).toEqual([]);
    expect(() => splitCommandLine(`node "open`, "--mcp")).toThrow(/Invalid --mcp: unterminated " in/);
  });
});

describe("parseMcpConfig", () => {
  it("reads the mcpServers shape Claude Desktop and IDEs use, plus forge-ts's own keys", () => {
    const text = `{
      // comments are fine (JSONC, like VS Code's files)
      "mcpServers": {
        "fs": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."], "env": { "DEBUG": "1" }, "autoApprove": [] },
        "docs": { "type": "http", "url": "http://127.0.0.1:3001/mcp", "headers": { "Authorization": "Bearer x" }, "prefix": "docs_", "deny": ["drop"] },
        "old": { "command": "old-server", "disabled": true },
      }
    }`;
    expect(parseMcpConfig(text, "mcp.json")).toEqual([
      { name: "fs", spec: { command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "."], env: { DEBUG: "1" } }, options: {} },
      { name: "docs", spec: { url: "http://127.0.0.1:3001/mcp", headers: { Authorization: "Bearer x" } }, options: { prefix: "docs_", deny: ["drop"] } },
    ]);
  });

  it("names the file and the entry in every error", () => {
    expect(() => parseMcpConfig("{ nope", "a.json")).toThrow(/Invalid --mcp-config a.json: not JSON/);
    expect(() => parseMcpConfig('{ "servers": {} }', "a.json")).toThrow(/expected \{ "mcpServers"/);
    expect(() => parseMcpConfig('{ "mcpServers": { "s": { "type": "sse", "url": "http://h/sse" } } }', "a.json")).toThrow(
      /mcpServers\.s: type "sse" is not supported/,
    );
    expect(() => parseMcpConfig('{ "mcpServers": { "s": { "command": "x", "args": "y" } } }', "a.json")).toThrow(/mcpServers\.s: args: /);
    expect(() => parseMcpConfig('{ "mcpServers": { "s": { "url": "ftp://h" } } }', "a.json")).toThrow(/url: must be an http/);
    expect(() => parseMcpConfig('{ "mcpServers": { "s": {} } }', "a.json")).toThrow(/give either command .* or url/);
  });
});

describe("serversFromFlags", () => {
  it("names flag servers by position after the config's", () => {
    const config = parseMcpConfig('{ "mcpServers": { "fs": { "command": "fs-server" } } }', "c.json");
    const servers = serversFromFlags({ mcp: ["node a.js --x 1", "b-server"], mcpUrl: ["http://127.0.0.1:1/mcp"], config });
    expect(servers.map((s) => [s.name, s.spec])).toEqual([
      ["fs", { command: "fs-server" }],
      ["mcp-1", { command: "node", args: ["a.js", "--x", "1"] }],
      ["mcp-2", { command: "b-server", args: [] }],
      ["mcp-url-1", { url: "http://127.0.0.1:1/mcp" }],
    ]);
    const clash = parseMcpConfig('{ "mcpServers": { "mcp-1": { "command": "x" } } }', "c.json");
    expect(() => serversFromFlags({ mcp: ["y"], config: clash })).toThrow(/server name "mcp-1"/);
    expect(() => serversFromFlags({ mcp: ["   "] })).toThrow(/expected a command/);
    expect(() => serversFromFlags({ mcpUrl: ["not a url"] })).toThrow(InvalidArgumentError);
  });
});

describe("options are checked up front", () => {
  it("one message per bad field", () => {
    expect(() => parseServerSpec({ command: "" })).toThrow(/command: must be a non-empty string/);
    expect(() => parseServerSpec({ command: "x", argv: [] })).toThrow(/Unrecognized key.*argv/);
    expect(() => parseServerSpec(null)).toThrow(/expected \{ command/);
    expect(() => parseToolsOptions({ timeoutMs: -1, allow: "x" })).toThrow(/allow: .*; timeoutMs: must be a number of milliseconds/);
    expect(() => parseToolsOptions({ onResult: 1 })).toThrow(/onResult: must be a function/);
    expect(parseToolsOptions(undefined)).toEqual({});
  });
});
