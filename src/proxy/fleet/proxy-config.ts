/**
 * The fleet config file of `forge-ts proxy --config proxy.json`: which backends there are, which
 * model names (and aliases) each serves, how many requests each takes at once, and how long
 * callers may queue. JSON (comments allowed), checked at start; every problem is reported with
 * the line and column of the offending value.
 *
 * ```jsonc
 * {
 *   "backends": {
 *     "gpu0": { "backend": "llamaserver", "baseUrl": "http://10.0.0.5:8080/v1", "model": "qwen3-8b",
 *               "maxConcurrent": 4, "mode": "native", "timeoutMs": 300000, "apiKey": "$GPU0_KEY" },
 *     "gpu1": { "backend": "ollama", "baseUrl": "http://10.0.0.6:11434", "model": "qwen3:8b", "maxConcurrent": 1, "contextLength": 32768 }
 *   },
 *   "models": { "qwen3-8b": { "backends": ["gpu0", "gpu1"], "aliases": ["qwen3:8b", "default"] } },
 *   "queue": { "maxWaiting": 64, "maxWaitMs": 30000 },
 *   "health": { "intervalMs": 5000, "timeoutMs": 2000 }
 * }
 * ```
 *
 * - `backends.<name>`: `backend` is one of `forge-ts proxy --backend`'s names and is built by the
 *   same factory (src/cli-kit/backends.ts), as are `baseUrl`, `mode`, `think`, `timeoutMs` and
 *   `recommendedSampling` (the flags' settings); `model` is the name sent to that backend; `maxConcurrent`
 *   (default unlimited) is its slot count; `apiKey` is a literal or `$NAME` of an environment
 *   variable, read at load time; `contextLength` (tokens) is the backend's window, in place of
 *   what it reports (Ollama /api/show, llama-server /props n_ctx; an OpenAI-compatible server
 *   mostly reports none): prompts over it are refused, Ollama's num_ctx is sized up to it.
 * - `models.<name>`: the name callers send, its `aliases`, and the backends that serve it in
 *   preference order (ties in load go round-robin). A caller that sends no model gets the first.
 * - `queue`: requests beyond every slot wait (FIFO) up to `maxWaitMs`; more than `maxWaiting`
 *   waiting, or a wait that runs out, is a 429 with `Retry-After`.
 * - `health`: each backend is probed at most every `intervalMs` (each probe `timeoutMs`).
 *
 * Unknown keys, a model naming a backend that is not defined, and a name used twice are refused.
 */
import { readFile } from "node:fs/promises";
import { findNodeAtLocation, parseTree, printParseErrorCode, type Node, type ParseError } from "jsonc-parser";
import { z } from "zod";
import { InvalidArgumentError, ProxyConfigError, type ProxyConfigIssue } from "../../core/errors.js";

/**
 * The backends `--config` accepts: every real one `--backend` does.
 *
 * @example
 * FLEET_BACKENDS.includes("llamaserver"); // true
 */
export const FLEET_BACKENDS = ["ollama", "llamaserver", "llamafile", "openai", "anthropic"] as const;

const positive = (what: string) => z.int({ error: `${what} must be a positive integer` }).positive({ error: `${what} must be a positive integer` });
const name = z.string().min(1, { error: "must be a non-empty string" });

const backendSchema = z
  .strictObject({
    backend: z.enum(FLEET_BACKENDS, { error: `backend must be one of ${FLEET_BACKENDS.join(", ")}` }),
    baseUrl: z.url({ protocol: /^https?$/, error: "baseUrl must be an http:// or https:// URL" }).optional(),
    model: name,
    maxConcurrent: positive("maxConcurrent").optional(),
    mode: z.enum(["native", "prompt", "auto"], { error: "mode must be native, prompt or auto" }).optional(),
    think: z.boolean().optional(),
    recommendedSampling: z.boolean().optional(),
    timeoutMs: positive("timeoutMs").optional(),
    apiKey: name.optional(),
    contextLength: positive("contextLength").optional(),
  })
  .superRefine((backend, ctx) => {
    if (backend.backend === "openai" && backend.baseUrl === undefined) {
      ctx.addIssue({ code: "custom", path: ["backend"], message: 'the "openai" backend needs a baseUrl (e.g. http://127.0.0.1:8000/v1)' });
    }
  });

const modelSchema = z.strictObject({
  backends: z.array(name).min(1, { error: "backends must name at least one backend" }),
  aliases: z.array(name).default([]),
});

/**
 * The config file's schema: its type, its validator and its defaults in one place. It checks
 * values only; parseProxyConfig adds positions, duplicate keys and `$NAME` keys.
 *
 * @example
 * proxyConfigSchema.safeParse({ backends: {}, models: {} }).success; // false: "define at least one backend"
 */
export const proxyConfigSchema = z
  .strictObject({
    backends: z.record(name, backendSchema).refine((b) => Object.keys(b).length > 0, { error: "define at least one backend" }),
    models: z.record(name, modelSchema).refine((m) => Object.keys(m).length > 0, { error: "define at least one model" }),
    queue: z
      .strictObject({
        maxWaiting: z.int({ error: "maxWaiting must be an integer >= 0" }).min(0, { error: "maxWaiting must be an integer >= 0" }).default(64),
        maxWaitMs: positive("maxWaitMs").default(30_000),
      })
      .prefault({}),
    health: z.strictObject({ intervalMs: positive("intervalMs").default(5_000), timeoutMs: positive("timeoutMs").default(2_000) }).prefault({}),
  })
  .superRefine((config, ctx) => {
    const seen = new Map<string, string>();
    const push = (path: (string | number)[], message: string) => ctx.addIssue({ code: "custom", path, message });
    for (const [model, entry] of Object.entries(config.models)) {
      entry.backends.forEach((backend, i) => {
        if (!Object.hasOwn(config.backends, backend)) push(["models", model, "backends", i], `no backend named "${backend}" is defined under "backends"`);
        else if (entry.backends.indexOf(backend) !== i) push(["models", model, "backends", i], `backend "${backend}" is listed twice`);
      });
      if (seen.has(model)) push(["models", model], `"${model}" is already an alias of model "${seen.get(model)}"`);
      seen.set(model, model);
      entry.aliases.forEach((alias, i) => {
        const owner = seen.get(alias);
        if (owner !== undefined) push(["models", model, "aliases", i], `"${alias}" already names model "${owner}"${owner === model ? "" : " (each name and alias must be unique)"}`);
        else seen.set(alias, model);
      });
    }
  });

const KNOWN_KEYS = [
  ...Object.keys(backendSchema.shape),
  ...Object.keys(modelSchema.shape),
  ...Object.keys(proxyConfigSchema.shape),
  ...Object.keys(proxyConfigSchema.shape.queue.unwrap().shape),
  ...Object.keys(proxyConfigSchema.shape.health.unwrap().shape),
];

/** A config as written (defaults may be left out): what `createProxy({ config })` takes. */
export type ProxyConfig = z.input<typeof proxyConfigSchema>;
/** A checked config with its defaults filled in. */
export type ResolvedProxyConfig = z.output<typeof proxyConfigSchema>;

/**
 * Check a config's text; `source` names it in errors (usually the file path).
 *
 * @example
 * const config = parseProxyConfig('{ "backends": { "a": { "backend": "ollama", "model": "qwen3:8b" } }, "models": { "qwen3": { "backends": ["a"] } } }', "inline");
 * config.queue.maxWaiting; // 64
 */
export function parseProxyConfig(text: string, source: string, env: NodeJS.ProcessEnv = process.env): ResolvedProxyConfig {
  const errors: ParseError[] = [];
  const root = parseTree(text, errors, { disallowComments: false, allowTrailingComma: false, allowEmptyContent: false });
  const at = positionsOf(text);
  if (errors.length > 0 || root === undefined) {
    // Only the first syntax error: the parser's recovery makes the rest echoes of it.
    const first = errors[0];
    const empty = text.trim() === "" || first === undefined;
    throw new ProxyConfigError(source, [{ ...at(empty ? 0 : first.offset), path: "", message: empty ? "the file is empty" : `not valid JSON: ${words(printParseErrorCode(first.error))}` }]);
  }
  const duplicates = duplicateKeys(root).map((key) => ({ ...at(key.offset), path: pathText(pathOf(key)), message: `duplicate key "${String(key.value)}"` }));
  if (duplicates.length > 0) throw new ProxyConfigError(source, duplicates);
  const parsed = proxyConfigSchema.safeParse(nodeValue(root));
  if (!parsed.success) throw new ProxyConfigError(source, parsed.error.issues.flatMap((issue) => issuesAt(root, at, issue)));
  const missing: ProxyConfigIssue[] = [];
  for (const [backend, entry] of Object.entries(parsed.data.backends)) {
    const variable = /^\$([A-Za-z_][A-Za-z0-9_]*)$/.exec(entry.apiKey ?? "")?.[1];
    if (variable === undefined) continue;
    const value = env[variable];
    if (value === undefined || value === "") {
      const path = ["backends", backend, "apiKey"];
      missing.push({ ...at(findNodeAtLocation(root, path)!.offset), path: pathText(path), message: `environment variable ${variable} is not set` });
    } else {
      entry.apiKey = value;
    }
  }
  if (missing.length > 0) throw new ProxyConfigError(source, missing);
  return parsed.data;
}

/**
 * Read and check a config file.
 *
 * @example
 * const config = await loadProxyConfig("proxy.json");
 * const proxy = createProxy({ config });
 */
export async function loadProxyConfig(path: string, env: NodeJS.ProcessEnv = process.env): Promise<ResolvedProxyConfig> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new InvalidArgumentError("config", `cannot read ${path}: ${(error as Error).message}`);
  }
  return parseProxyConfig(text, path, env);
}

/** A zod issue as one or more positioned issues: an unknown key points at the key itself. */
function issuesAt(root: Node, at: (offset: number) => { line: number; column: number }, issue: z.core.$ZodIssue): ProxyConfigIssue[] {
  const path = issue.path.map((p) => (typeof p === "number" ? p : String(p)));
  const node = nearestNode(root, path);
  if (issue.code === "unrecognized_keys") {
    return issue.keys.map((key) => {
      const property = node.children?.find((p) => p.children?.[0]?.value === key);
      return { ...at(property?.offset ?? node.offset), path: pathText([...path, key]), message: `unknown key "${key}"${suggestion(node, key)}` };
    });
  }
  const missing = path.length > 0 && findNodeAtLocation(root, path) === undefined;
  return [{ ...at(node.offset), path: pathText(path), message: missing ? `required key "${String(path.at(-1))}" is missing` : issue.message }];
}

/** The node at `path`, or at its nearest ancestor that exists (a missing key points at its object). */
function nearestNode(root: Node, path: (string | number)[]): Node {
  for (let n = path.length; n >= 0; n--) {
    const node = findNodeAtLocation(root, path.slice(0, n));
    if (node) return node;
  }
  return root;
}

/** For an unknown key, the known key it probably meant (same letters, other case or a typo). */
function suggestion(object: Node, key: string): string {
  const lower = key.toLowerCase().replace(/[-_]/g, "");
  const match = KNOWN_KEYS.find((k) => k.toLowerCase() === lower);
  return match !== undefined && object.type === "object" ? ` (did you mean "${match}"?)` : "";
}

/** The value of a node; objects are built with defineProperty so a "__proto__" key stays a key. */
function nodeValue(node: Node): unknown {
  if (node.type === "array") return (node.children ?? []).map(nodeValue);
  if (node.type !== "object") return node.value;
  const out: Record<string, unknown> = {};
  for (const property of node.children ?? []) {
    const [key, value] = property.children ?? [];
    if (key && value) Object.defineProperty(out, String(key.value), { value: nodeValue(value), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** Key nodes that repeat a key already present in the same object (JSON.parse would keep the last silently). */
function duplicateKeys(node: Node): Node[] {
  const out: Node[] = [];
  if (node.type === "object") {
    const seen = new Set<string>();
    for (const property of node.children ?? []) {
      const key = property.children?.[0];
      if (key && seen.has(String(key.value))) out.push(key);
      if (key) seen.add(String(key.value));
    }
  }
  for (const child of node.children ?? []) out.push(...duplicateKeys(child));
  return out;
}

/** The JSON path of a key node (the path of its property's value). */
function pathOf(key: Node): (string | number)[] {
  const path: (string | number)[] = [];
  for (let node: Node | undefined = key.parent; node?.parent; node = node.parent) {
    const parent = node.parent;
    if (node.type === "property") path.unshift(String(node.children?.[0]?.value));
    else if (parent.type === "array") path.unshift(parent.children!.indexOf(node));
  }
  return path;
}

/**
 * A JSON path as people write it.
 *
 * @example
 * pathText(["models", "qwen3:8b", "aliases", 1]); // 'models["qwen3:8b"].aliases[1]'
 */
export function pathText(path: readonly (string | number)[]): string {
  return path
    .map((p, i) => (typeof p === "number" ? `[${p}]` : /^[A-Za-z_$][\w$]*$/.test(p) ? `${i === 0 ? "" : "."}${p}` : `[${JSON.stringify(p)}]`))
    .join("");
}

/** Offset → 1-based line and column. */
function positionsOf(text: string): (offset: number) => { line: number; column: number } {
  const starts = [0];
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) starts.push(i + 1);
  return (offset) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: offset - starts[lo]! + 1 };
  };
}

/** "CloseBraceExpected" → "close brace expected". */
function words(code: string): string {
  return code.replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase();
}
