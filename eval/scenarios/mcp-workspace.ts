/**
 * The mcp family's fixture: a temp directory seeded with a few files, served by the real
 * @modelcontextprotocol/server-filesystem over stdio (this node running the package's bin from
 * node_modules: no npx, no download), its tools taken with `mcpTools`. One server for every run
 * that holds the fixture; the last holder closes it and removes the directory.
 *
 * The model sees the directory as `/workspace`, not as its temp path: the simulated model seeds
 * each answer from the conversation, and a random path in every listing and error message would
 * make each batch draw different faults (no run would be reproducible). Paths in arguments are
 * mapped in, paths in results and server errors mapped back, like a container's mount point;
 * everything else is the server's own answer.
 */
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import type { McpToolSet } from "../../src/mcp/mcp-tools.js";
import { McpServerError, McpToolError, type AnyToolDef, type ToolExecuteContext } from "../../src/core/index.js";
import { EvalFixture } from "../fixture.js";

/** Where the model sees the served directory. */
export const WORKSPACE = "/workspace";

/** The server's name in errors and records. */
export const WORKSPACE_SERVER = "filesystem";

/** Every seeded file, by path under the workspace. Facts are on `key: value` lines a model can quote. */
export const WORKSPACE_FILES: Readonly<Record<string, string>> = {
  "README.md": "# Ledgerline\n\nInternal billing service.\n\nlicense: Apache-2.0\nmaintainer: Ines Duarte\n",
  "notes/release.md": "# Release notes\n\nversion: 2.4.0\nship_date: 2025-06-12\nowner: Priya Raman\n\nHighlights: faster invoice export, new audit log.\n",
  "notes/deploy-checklist.md": "# Deploy checklist\n\nrequired_port: 8443\ntls: required\nhealth_check: /healthz\n",
  "config/payments.env": "SERVICE=payments\nPORT=8080\nTLS=on\n",
  "on-call.md": "# On-call rota\n\nweek: 2025-W24\nprimary: Tomas Ortega\nbackup: Mei Lin\n",
};

/** The server's tools the family offers (its names), and the prefix they take in workflows. */
const ALLOW = ["list_allowed_directories", "list_directory", "read_text_file"];
const PREFIX = "fs_";

export interface McpWorkspace {
  /** The MCP tools, prefixed `fs_`, with `/workspace` paths; read_text_file needs fs_list_allowed_directories first. */
  tools: Readonly<Record<string, AnyToolDef>>;
  /** The real directory (for tests). */
  root: string;
  /** The server's process id (for tests: it must be gone after close). */
  pid: number | undefined;
}

/** Paths the model wrote under /workspace, as the server knows them. */
function inward(value: unknown, root: string): unknown {
  if (typeof value === "string") return value === WORKSPACE || value.startsWith(`${WORKSPACE}/`) ? root + value.slice(WORKSPACE.length) : value;
  if (Array.isArray(value)) return value.map((v) => inward(v, root));
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, inward(v, root)]));
  return value;
}

/** The server's paths as the model sees them. */
function outward(value: unknown, root: string): unknown {
  if (typeof value === "string") return value.replaceAll(root, WORKSPACE);
  if (Array.isArray(value)) return value.map((v) => outward(v, root));
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, outward(v, root)]));
  return value;
}

/** The MCP tool with /workspace paths; its name, description, schema, check and prerequisites unchanged. */
function mounted(tool: AnyToolDef, root: string): AnyToolDef {
  return Object.freeze({
    ...tool,
    execute: async (args: Record<string, unknown>, context: ToolExecuteContext) => {
      try {
        return outward(await tool.execute(inward(args, root) as Record<string, unknown>, context), root);
      } catch (error) {
        // The server's refusal stays an McpToolError (the tool-error channel), with the path it names mapped back.
        if (error instanceof McpToolError) throw new McpToolError(error.server, error.tool, outward(error.message, root) as string, error.result, { cause: error });
        throw error;
      }
    },
  });
}

/** The optional packages the family needs that do not resolve from here, as one line (or undefined). */
function missingPackages(): string | undefined {
  const require = createRequire(import.meta.url);
  const missing = ["@modelcontextprotocol/sdk/package.json", "@modelcontextprotocol/server-filesystem/package.json"].filter((id) => {
    try {
      require.resolve(id);
      return false;
    } catch {
      return true;
    }
  });
  return missing.length === 0 ? undefined : `not installed: ${missing.map((id) => id.replace("/package.json", "")).join(", ")}`;
}

/** The installed server's bin file; a missing package is an McpServerError saying what to install. */
function filesystemBin(): string {
  const require = createRequire(import.meta.url);
  let manifest: string;
  try {
    manifest = require.resolve("@modelcontextprotocol/server-filesystem/package.json");
  } catch (cause) {
    throw new McpServerError(
      WORKSPACE_SERVER,
      "cannot start: the mcp eval family needs @modelcontextprotocol/server-filesystem and @modelcontextprotocol/sdk installed; install them, or select other scenarios with --tags or --scenario",
      "",
      { cause },
    );
  }
  const { bin } = require(manifest) as { bin: string | Record<string, string> };
  return path.join(path.dirname(manifest), typeof bin === "string" ? bin : Object.values(bin)[0]!);
}

async function openWorkspace(): Promise<{ value: McpWorkspace; close(): Promise<void> }> {
  const bin = filesystemBin();
  // The SDK is an optional peer: loaded only when this fixture opens, never by importing the suite
  // (without it the import fails with one line naming it).
  const { mcpTools } = await import("../../src/mcp/mcp-tools.js");
  // realpath: the server reports the resolved directory (macOS /var is /private/var), which is what `outward` must find.
  const root = await realpath(await mkdtemp(path.join(tmpdir(), "forge-eval-mcp-")));
  let set: McpToolSet | undefined;
  try {
    for (const [file, text] of Object.entries(WORKSPACE_FILES)) {
      await mkdir(path.dirname(path.join(root, file)), { recursive: true });
      await writeFile(path.join(root, file), text);
    }
    set = await mcpTools(
      { command: process.execPath, args: [bin, root] },
      { name: WORKSPACE_SERVER, prefix: PREFIX, allow: ALLOW, prerequisites: { read_text_file: [`${PREFIX}list_allowed_directories`] }, timeoutMs: 10_000 },
    );
  } catch (error) {
    await rm(root, { recursive: true, force: true });
    throw error;
  }
  const server = set;
  const tools = Object.fromEntries(Object.entries(server.tools).map(([name, tool]) => [name, mounted(tool, root)]));
  return {
    value: { tools, root, pid: server.pid },
    close: async () => {
      try {
        await server.close();
      } finally {
        await rm(root, { recursive: true, force: true });
      }
    },
  };
}

/**
 * The one server-filesystem the mcp family shares: opened by the first run (or batch) that
 * needs it, closed by the last.
 *
 * @example await withFixtures(MCP, async () => Object.keys(MCP_WORKSPACE.value.tools)); // ["fs_read_text_file", ...]
 */
export const MCP_WORKSPACE = new EvalFixture<McpWorkspace>("mcp-workspace", openWorkspace, missingPackages);
