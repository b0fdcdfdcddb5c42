/**
 * The core install as a user gets it: the package packed (`npm pack`, its prepack build
 * included) from a copy of this checkout, installed into an empty project outside the repo (no
 * node_modules above it), with none of the optional peers. A workflow runs there through the
 * installed `forge-ts`, as a library (streaming NDJSON from a loopback server speaking Ollama's
 * /api/chat) and as the CLI with a file store; each optional entry and command fails at import
 * with one line naming the packages to install. Prints the install's size and package count
 * (README "Install"). In the faults tier: packing and installing take a minute or two.
 */
import { execFile } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureNode22 } from "../../.ci/node22.js";
import { REPO_ROOT } from "../support/cli-build.js";
import { sendJson, sendNdjson, startFakeServer, type FakeServer } from "../clients/support/fake-server.js";
import { ollamaChat, ollamaStreamLines, type ModelReply } from "../clients/support/wire.js";

const exec = promisify(execFile);
const MODEL = "notes-model";
/** The optional peers (package.json peerDependenciesMeta), none of which the core install may hold. */
const OPTIONAL_PEERS = ["pg", "@libsql/client", "bullmq", "ioredis", "@modelcontextprotocol/sdk", "@anthropic-ai/sdk", "@statelyai/inspect"];
const env = { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("FORGE_"))), NO_COLOR: "1" };

let work: string;
let project: string;
let ollama: FakeServer;

/**
 * The package as `npm pack` makes it, from a copy of this checkout (the build writes dist/ there,
 * not here); or, in CI, the tarball `.ci/run` packed from this checkout and checked with publint
 * and arethetypeswrong (FORGE_PACKED_TARBALL), so the package is built once.
 */
async function pack(): Promise<string> {
  const packed = process.env.FORGE_PACKED_TARBALL;
  if (packed) {
    if (!existsSync(packed)) throw new Error(`FORGE_PACKED_TARBALL=${packed}: no such file`);
    return packed;
  }
  const stage = path.join(work, "stage");
  // What git tracks or would (ignored build outputs left out), for the entries the build and the tarball read.
  const entries = ["package.json", "tsconfig.json", "tsconfig.build.json", "README.md", "LICENSE", "CHANGELOG.md", "docs", "src", "machines", "eval", "visualizer", ".ci/ai-sdk7", ".ci/ai-sdk7.ts", ".ci/node22.ts"];
  const { stdout } = await exec("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", ...entries], { cwd: REPO_ROOT, maxBuffer: 64 * 1024 * 1024 });
  for (const file of stdout.split("\0").filter((f) => f !== "" && existsSync(path.join(REPO_ROOT, f)))) {
    mkdirSync(path.dirname(path.join(stage, file)), { recursive: true });
    cpSync(path.join(REPO_ROOT, file), path.join(stage, file));
  }
  // The installs the build reads: the project's, and AI SDK 7's (the globalSetup installed it).
  for (const modules of ["node_modules", ".ci/ai-sdk7/node_modules"]) symlinkSync(path.join(REPO_ROOT, modules), path.join(stage, modules));
  const out = path.join(work, "tarball");
  mkdirSync(out);
  await exec("npm", ["pack", "--pack-destination", out, "--silent"], { cwd: stage, env, maxBuffer: 64 * 1024 * 1024 });
  const [tarball] = readdirSync(out);
  if (tarball === undefined) throw new Error(`npm pack wrote nothing to ${out}`);
  return path.join(out, tarball);
}

/** Every package npm installed, by its path under the project (node_modules/.package-lock.json, npm's record of the tree). */
function installed(): string[] {
  const lock = JSON.parse(readFileSync(path.join(project, "node_modules/.package-lock.json"), "utf8")) as { packages: Record<string, unknown> };
  return Object.keys(lock.packages).filter((p) => p !== "");
}

const node = (args: string[]) => exec(process.execPath, args, { cwd: project, env, maxBuffer: 16 * 1024 * 1024 });
const forge = (args: string[]) => node([path.join(project, "node_modules/forge-ts/dist/src/cli/main.js"), ...args]);
/** A command that must fail: its exit code and output. */
const failing = (args: string[]) =>
  forge(args).then(
    () => {
      throw new Error(`forge-ts ${args.join(" ")} succeeded`);
    },
    (e: { code: number; stdout: string; stderr: string }) => e,
  );
/** What a missing optional peer says: the error's message. */
const missingMessage = (feature: string, packages: string[]) =>
  `${feature} needs the ${packages.length === 1 ? "package" : "packages"} ${packages.map((p) => `"${p}"`).join(" and ")}: npm install ${packages.join(" ")}`;
/** The CLI's line for it (src/cli-kit/run-cli.ts: the message first, the code after). */
const missing = (feature: string, packages: string[]) => `forge-ts: ${missingMessage(feature, packages)} [FORGE_MISSING_PACKAGE]`;

beforeAll(async () => {
  // Outside the repository, so nothing resolves from the checkout's node_modules.
  work = mkdtempSync(path.join(tmpdir(), "forge-core-install-"));
  const packStart = Date.now();
  const tarball = await pack();
  const packSeconds = (Date.now() - packStart) / 1000;
  project = path.join(work, "project");
  mkdirSync(project);
  writeFileSync(path.join(project, "package.json"), JSON.stringify({ name: "core-install", private: true, type: "module" }, null, 2));
  const installStart = Date.now();
  // The npm cache first (a checkout's `npm ci` filled it), the registry for what it lacks.
  // As the README's "In your own project" says: forge-ts and zod (the workflows' schemas).
  await exec("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", tarball, "zod"], { cwd: project, env, maxBuffer: 16 * 1024 * 1024 });
  const installSeconds = (Date.now() - installStart) / 1000;
  const { stdout: du } = await exec("du", ["-sk", "node_modules"], { cwd: project });
  const megabytes = Number(du.split("\t")[0]) / 1024;
  console.log(
    `[forge-ts] core install (npm install of the packed forge-ts into an empty project, Node ${process.versions.node}): ` +
      `${installed().length} packages, ${megabytes.toFixed(1)} MB in node_modules (du -sk); ${process.env.FORGE_PACKED_TARBALL ? "packed by CI" : `packed in ${packSeconds.toFixed(0)} s`}, installed in ${installSeconds.toFixed(0)} s`,
  );

  // A workflow module as a user writes it, against the installed package.
  writeFileSync(
    path.join(project, "notes.mjs"),
    `import { z } from "zod";
import { defineTool, Workflow } from "forge-ts";

export function createWorkflow({ mcpTools } = { mcpTools: {} }) {
  return new Workflow({
    name: "notes",
    tools: {
      ...mcpTools,
      note: defineTool({ name: "note", description: "write a note", parameters: z.object({ text: z.string() }), execute: async ({ text }) => "noted: " + text }),
      finish: defineTool({ name: "finish", description: "finish", parameters: z.object({ summary: z.string() }), execute: async ({ summary }) => ({ summary }) }),
    },
    requiredSteps: ["note"],
    terminalTool: "finish",
    systemPromptTemplate: "Take a note, then finish.",
  });
}
export const workflow = createWorkflow();
`,
  );
  // The library: the loop, OllamaClient streaming, a FileRunStore.
  writeFileSync(
    path.join(project, "run.mjs"),
    `import { ContextManager, FileRunStore, OllamaClient, TieredCompact, WorkflowRunner } from "forge-ts";
import { workflow } from "./notes.mjs";

const runner = new WorkflowRunner({
  client: new OllamaClient({ model: ${JSON.stringify(MODEL)}, baseUrl: process.argv[2], numCtx: 8192 }),
  contextManager: new ContextManager({ strategy: new TieredCompact({ keepRecent: 2 }), budgetTokens: 8192 }),
  store: new FileRunStore({ dir: "library-store" }),
  stream: true,
});
const outcome = await runner.start(workflow, "take a note", { runId: "lib-1" });
console.log(JSON.stringify(outcome));
`,
  );
  // Each optional entry imported: what it throws.
  writeFileSync(
    path.join(project, "entries.mjs"),
    `const out = {};
for (const entry of ["forge-ts/postgres", "forge-ts/sql", "forge-ts/queue", "forge-ts/mcp"]) {
  try {
    await import(entry);
    out[entry] = "loaded";
  } catch (error) {
    out[entry] = { name: error.name, code: error.code, message: error.message };
  }
}
console.log(JSON.stringify(out));
`,
  );

  // Ollama's /api/chat: note first, then finish; NDJSON when the request streams, JSON otherwise.
  ollama = await startFakeServer((req, res) => {
    if (req.path === "/api/tags") return sendJson(res, 200, { models: [{ name: MODEL }] });
    if (req.path !== "/api/chat") return sendJson(res, 404, { error: `no ${req.path} here` });
    const turns = (req.body.messages as { role: string }[]).filter((m) => m.role === "assistant").length;
    const reply: ModelReply = turns === 0 ? { toolCalls: [{ name: "note", args: { text: "hello" } }] } : { toolCalls: [{ name: "finish", args: { summary: "noted hello" } }] };
    if (req.body.stream === true) sendNdjson(res, ollamaStreamLines(reply, MODEL));
    else sendJson(res, 200, ollamaChat(reply, MODEL));
  });
}, 900_000);

afterAll(async () => {
  await ollama?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("the core install (the packed package in an empty project)", () => {
  it("holds none of the optional peers", () => {
    const paths = installed();
    expect(paths).toContain("node_modules/forge-ts");
    for (const peer of OPTIONAL_PEERS) {
      expect(paths.filter((p) => p === `node_modules/${peer}` || p.endsWith(`/node_modules/${peer}`)), peer).toEqual([]);
      expect(existsSync(path.join(project, "node_modules", peer)), peer).toBe(false);
    }
  });

  it("runs a workflow as a library: OllamaClient streaming Ollama's NDJSON, a FileRunStore", { timeout: 300_000 }, async () => {
    const { stdout } = await node(["run.mjs", ollama.url]);
    expect(JSON.parse(stdout)).toMatchObject({ status: "done", result: { summary: "noted hello" } });
    const chats = ollama.to("/api/chat").filter((r) => r.body.stream === true);
    expect(chats.length).toBeGreaterThanOrEqual(2);
    expect(existsSync(path.join(project, "library-store"))).toBe(true);
  });

  it("runs a workflow with the CLI (forge-ts run, a store directory) and lists it; the core commands load", { timeout: 300_000 }, async () => {
    const ran = await forge(["run", "notes.mjs", "take a note", "--backend", "ollama", "--model", MODEL, "--base-url", ollama.url, "--store", "cli-store", "--run-id", "cli-1"]);
    expect(ran.stdout).toMatch(/^run cli-1\n/);
    expect(JSON.parse(ran.stdout.slice(ran.stdout.indexOf("{")))).toEqual({ summary: "noted hello" });
    expect((await forge(["runs", "list", "--store", "cli-store"])).stdout).toMatch(/cli-1 +notes .*done/);
    // --help loads each core command's whole module graph, and prints whatever is installed:
    // the optional peers are for running a command, not for reading its usage.
    for (const command of ["demo", "proxy", "visualize", "run", "runs", "mcp", "worker", "eval", "eval-batch", "report"]) {
      expect((await forge([command, "--help"])).stdout).toMatch(new RegExp(`^usage: forge-ts ${command}\\b`, "im"));
    }
  });

  it("runs the README's quick start as the README tells a project to: saved as weather.ts, `node weather.ts` (Node >= 22.18)", { timeout: 300_000 }, async () => {
    const readme = readFileSync(path.join(REPO_ROOT, "README.md"), "utf8");
    const code = /## Quick start[\s\S]*?```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(code).toContain('from "forge-ts"');
    writeFileSync(path.join(project, "weather.ts"), code!);
    const { stdout, stderr } = await exec(ensureNode22(), ["weather.ts"], { cwd: project, env });
    expect(stdout).toContain('retry_nudge    [UnknownTool] There is no tool named "get_weathers"');
    expect(stdout.trim().split("\n").at(-1)).toBe("result: Yes: 21 °C in Lisbon.");
    expect(stderr).toBe("");
  });

  it("fails at import of each optional entry with one line naming what to install", { timeout: 300_000 }, async () => {
    const { stdout } = await node(["entries.mjs"]);
    const error = (feature: string, packages: string[]) => ({ name: "MissingPackageError", code: "FORGE_MISSING_PACKAGE", message: missingMessage(feature, packages) });
    expect(JSON.parse(stdout)).toEqual({
      "forge-ts/postgres": error("forge-ts/postgres", ["pg"]),
      "forge-ts/sql": error("forge-ts/sql", ["@libsql/client"]),
      "forge-ts/queue": error("forge-ts/queue", ["bullmq", "ioredis"]),
      "forge-ts/mcp": error("forge-ts/mcp", ["@modelcontextprotocol/sdk"]),
    });
  });

  it("gives the CLI's commands and flags that need an optional peer the same one line", { timeout: 300_000 }, async () => {
    const backend = ["--backend", "ollama", "--model", MODEL, "--base-url", ollama.url];
    const cases: [string[], string][] = [
      [["run", "notes.mjs", "hi", ...backend, "--store", "postgres://forge@127.0.0.1:1/forge"], missing("forge-ts/postgres", ["pg"])],
      [["run", "notes.mjs", "hi", ...backend, "--store", "file:runs.db"], missing("forge-ts/sql", ["@libsql/client"])],
      [["run", "notes.mjs", "hi", ...backend, "--mcp", "some-mcp-server"], missing("forge-ts/mcp", ["@modelcontextprotocol/sdk"])],
      [["worker", "--redis", "redis://127.0.0.1:1", "--workflow", "notes.mjs", ...backend], missing("forge-ts/queue", ["bullmq", "ioredis"])],
      [["mcp", "--workflow", "notes.mjs", ...backend], missing("forge-ts mcp", ["@modelcontextprotocol/sdk"])],
    ];
    for (const [args, line] of cases) {
      const failed = await failing(args);
      expect({ args, code: failed.code, stderr: failed.stderr }).toEqual({ args, code: 1, stderr: `${line}\n` });
    }
  });
});
