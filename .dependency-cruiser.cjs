/**
 * The layers of forge-ts as dependency-cruiser rules (`npm run lint:deps`, part of `npm test`).
 * Every arrow points down; a violation prints the rule's name and both files.
 *
 * Layers, top to bottom (worked out from the imports, issue 23):
 *   entries        src/index.ts, src/testing.ts, src/sql.ts, src/postgres.ts, src/mcp.ts, src/ai-sdk.ts —
 *                  the public entry points re-export every layer, so nothing imports them
 *   surfaces       src/cli, eval, visualizer, src/proxy (the HTTP app), src/queue, src/mcp-server,
 *                  src/ai-sdk (the AI SDK middleware: the proxy-request machine's second front door)
 *   surface kit    src/cli-kit — what the commands and eval's scripts share (backend building,
 *                  integer flags, Ctrl-C, exit codes, resume hints); `forge-ts eval` mounts
 *                  eval's scripts, so src/cli → eval, and eval never imports src/cli
 *   runner         src/runner.ts, src/runner/ (its services.ts: the machine's I/O) — the workflow
 *                  machine's drivers (the runner, and the Guardrails facade that steps it for a
 *                  foreign loop) — and src/request-driver.ts, the proxy-request machine's one
 *                  driver (the proxy and src/ai-sdk both run requests through it)
 *   machines       machines/ — configuration; the runner supplies services by name (provide())
 *   services       src/clients, src/server, src/persistence, src/telemetry, src/mcp — the I/O.
 *                  Stores and telemetry read the machine context's types, so they sit above
 *                  the machine logic, beside (never inside) the machines
 *   machine logic  src/loop (workflow machine), src/proxy-request (proxy-request machine)
 *   shared logic   src/guardrails, src/parsing, src/context, src/tools, src/models — pure rules
 *                  the machine logic and the clients both use (rescue parsing, nudges, sampling)
 *   core           src/core — imports nothing of ours
 */
const LAYERS = [
  { name: "entries", path: "^src/(index|testing|sql|postgres|mcp|ai-sdk)\\.ts$" },
  // eval/examples are written as users write them, against the public entry points.
  { name: "surfaces", path: "^(src/(cli|proxy|queue|mcp-server|ai-sdk)/|eval/|visualizer/)", exempt: "^eval/examples/" },
  { name: "surface-kit", path: "^src/cli-kit/" },
  { name: "runner", path: "^src/(runner\\.ts|runner/|request-driver\\.ts)" },
  { name: "machines", path: "^machines/" },
  { name: "services", path: "^src/(clients|server|persistence|telemetry|mcp)/" },
  { name: "machine-logic", path: "^src/(loop|proxy-request)/" },
  { name: "shared-logic", path: "^src/(guardrails|parsing|context|tools|models)/" },
  { name: "core", path: "^src/core/" },
];

// One rule per layer: it may import its own layer and those below, never one above.
const upward = LAYERS.slice(1).map((layer, i) => ({
  name: `no-upward-from-${layer.name}`,
  comment: `${layer.name} imports only its own layer and those below it (${LAYERS.slice(0, i + 1).map((l) => l.name).join(", ")} are above)`,
  severity: "error",
  from: layer.exempt ? { path: layer.path, pathNot: layer.exempt } : { path: layer.path },
  to: { path: LAYERS.slice(0, i + 1).map((l) => l.path) },
}));

// The pairs of the no-circular rule's comment: a cycle made only of these is tolerated.
const KNOWN_CYCLES = ["^src/core/(tool|workflow)\\.ts$"];

// Every folder of ours must belong to a layer, or the rules above would not see it.
const OURS = "^(src|machines|eval|visualizer)/";

/**
 * The optional peer dependencies (package.json peerDependenciesMeta): the core install has none
 * of them. Each may be imported only by the modules of the feature that needs it, which load it
 * with optionalPackages() (src/core/optional-package.ts): a missing one is one line naming it.
 * eval/bench (not shipped) measures every store and the queue.
 */
const OPTIONAL_PEERS = [
  { feature: "postgres", packages: ["pg"], by: ["^src/persistence/postgres-run-store\\.ts$"] },
  { feature: "sql", packages: ["@libsql/client"], by: ["^src/persistence/sql-run-store\\.ts$"] },
  { feature: "queue", packages: ["bullmq", "ioredis"], by: ["^src/queue/", "^eval/queue\\.ts$", "^eval/bench/"] },
  { feature: "mcp", packages: ["@modelcontextprotocol/sdk"], by: ["^src/mcp/", "^src/mcp-server/", "^src/cli/mcp\\.ts$"] },
  // Loaded on a client's first request (and its types, which cost nothing at run time).
  { feature: "anthropic", packages: ["@anthropic-ai/sdk"], by: ["^src/clients/anthropic(-convert)?\\.ts$"] },
  // Loaded when `forge-ts visualize --stately` asks for it.
  { feature: "stately", packages: ["@statelyai/inspect"], by: ["^visualizer/stately\\.ts$"] },
];
const packagePath = (packages) => `(^|node_modules/)(${packages.join("|")})(/|$)`;

/**
 * The modules that load an optional peer when they are imported (the features above whose
 * packages load at import: a top-level await), and those that import them: the subpath entries,
 * the queue, MCP (client and server), the libSQL and Postgres stores, and the commands and eval
 * code built only on them. Everything else is the core install.
 */
const OPTIONAL_FEATURES = [
  "^src/(postgres|sql|mcp)\\.ts$",
  "^src/persistence/(postgres|sql)-run-store\\.ts$",
  "^src/(queue|mcp|mcp-server)/",
  "^src/cli/(worker|mcp)\\.ts$",
  "^eval/queue\\.ts$",
];
/**
 * swc, which parses the sources, does not tell `import type` from `import`: these arrows into an
 * optional feature are type-only (nothing is loaded at run time), so they are allowed by name.
 */
const TYPE_ONLY_ARROWS = [
  { from: "^src/cli/workflow-module\\.ts$", to: "^src/mcp/connect-servers\\.ts$" }, // WorkflowModuleContext
  { from: "^visualizer/protocol\\.ts$", to: "^src/queue/counts\\.ts$" }, // QueueCount
  { from: "^eval/scenarios/mcp-workspace\\.ts$", to: "^src/mcp/mcp-tools\\.ts$" }, // McpToolSet
];
const typeOnlyFrom = TYPE_ONLY_ARROWS.map((a) => a.from);
const optionalPeerRules = OPTIONAL_PEERS.map(({ feature, packages, by }) => ({
  name: `optional-peer-${feature}`,
  comment: `${packages.join(" and ")} (optional peers, not in the core install) are imported only by ${by.join(", ")}`,
  severity: "error",
  from: { path: OURS, pathNot: by },
  to: { path: packagePath(packages) },
}));
// The core: every module of ours outside the optional features (eval/bench: not shipped, measures them all).
const CORE_MODULES = { path: OURS, pathNot: [...OPTIONAL_FEATURES, "^eval/bench/"] };
const coreLoadsFeaturesLazily = [
  {
    name: "core-loads-optional-features-lazily",
    comment:
      "The core install (forge-ts: the loop, clients, proxy, file store, telemetry; the CLI's run, demo, proxy, runs, " +
      "visualize) has no optional peer: a static import of a module that loads one would fail the core at import " +
      "(ERR_MODULE_NOT_FOUND before any of our code runs), so the core reaches the optional features only with import() " +
      "— which fails with one line naming the package. Type-only arrows: TYPE_ONLY_ARROWS.",
    severity: "error",
    from: { ...CORE_MODULES, pathNot: [...CORE_MODULES.pathNot, ...typeOnlyFrom] },
    to: { path: OPTIONAL_FEATURES, dependencyTypesNot: ["dynamic-import"] },
  },
  ...TYPE_ONLY_ARROWS.map((arrow) => ({
    name: "core-loads-optional-features-lazily",
    comment: `${arrow.from} imports only types from ${arrow.to}; nothing else of the optional features but with import()`,
    severity: "error",
    from: { path: arrow.from },
    to: { path: OPTIONAL_FEATURES, pathNot: arrow.to, dependencyTypesNot: ["dynamic-import"] },
  })),
];

module.exports = {
  forbidden: [
    ...upward,
    {
      name: "core-imports-nothing-of-ours",
      comment: "src/core is the bottom: types, errors and the logger, with no import of any other module of ours",
      severity: "error",
      from: { path: "^src/core/" },
      to: { path: OURS, pathNot: "^src/core/" },
    },
    {
      name: "machines-take-services-by-name",
      comment:
        "machines/ is configuration: guards and actions come from the machine logic below, services are supplied by name " +
        "(machine.provide), so a machine imports no service module and no I/O (node:fs, node:http, undici, child_process)",
      severity: "error",
      from: { path: "^machines/" },
      to: {
        path: [
          "^src/(clients|server|persistence|telemetry|mcp)/",
          "^(node:)?(fs|fs/promises|http|https|http2|net|child_process)$",
          "^undici$",
          "node_modules/undici/",
        ],
      },
    },
    {
      name: "eval-apart-from-cli",
      comment: "src/cli mounts eval's scripts (`forge-ts eval`, `report`, the worker's eval jobs); what both need lives in src/cli-kit",
      severity: "error",
      from: { path: "^eval/" },
      to: { path: "^src/cli/" },
    },
    {
      name: "surfaces-stay-apart",
      comment:
        "A surface builds on the layers below, not on another surface. src/cli (it mounts every surface as a subcommand) and " +
        "eval (its harness and benchmarks drive the proxy, the queue and the visualizer as a user would) are exempt. " +
        "Known arrows left: visualizer/protocol.ts → src/queue/counts.ts (the type of the queue panel's counts) and " +
        "src/mcp-server/mcp-http-app.ts → src/proxy/caller-auth.ts (one API-key middleware for both HTTP apps).",
      severity: "error",
      from: { path: "^(src/proxy|src/queue|src/mcp-server|visualizer)/" },
      to: {
        path: "^(src/(cli|proxy|queue|mcp-server)/|eval/|visualizer/)",
        // $1: the importing surface's own folder.
        pathNot: ["^$1/", "^src/queue/counts\\.ts$", "^src/proxy/caller-auth\\.ts$"],
      },
    },
    {
      name: "every-module-in-a-layer",
      comment: "a new top-level folder under src/ must join a layer in .dependency-cruiser.cjs",
      severity: "error",
      from: { path: OURS, pathNot: LAYERS.map((l) => l.path) },
      to: {},
    },
    {
      name: "no-circular",
      comment:
        "No import cycles in our code. One type-only cycle remains, inside one folder, a pair that describe each other: " +
        "src/core/tool.ts ⇄ src/core/workflow.ts (a tool may run a child Workflow; a Workflow holds tools). " +
        "A cycle through any other module is an error.",
      severity: "error",
      from: { path: OURS },
      to: { circular: true, viaSomeNot: KNOWN_CYCLES },
    },
    ...optionalPeerRules,
    ...coreLoadsFeaturesLazily,
    {
      name: "runner-folder-below-runner",
      comment:
        "src/runner.ts builds on src/runner/ (the sessions, the services, child runs), never the reverse: with no file-level " +
        "cycle the two could still import each other as rooms (they did: services.ts at src/ and a type in runner/).",
      severity: "error",
      from: { path: "^src/runner/" },
      to: { path: "^src/runner\\.ts$" },
    },
  ],
  options: {
    // TypeScript 7 has no JavaScript API: swc parses the sources.
    parser: "swc",
    doNotFollow: { path: "node_modules" },
    tsConfig: { fileName: "tsconfig.json" },
    // Type-only imports are arrows too: a type from a layer above couples the code the same way.
    tsPreCompilationDeps: true,
  },
};
