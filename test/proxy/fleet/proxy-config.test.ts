/**
 * The fleet config file: a valid one round-trips with its defaults, every kind of mistake is
 * refused with the line and column of the offending value, `$NAME` keys come from the
 * environment, and createProxy refuses a config it cannot use.
 */
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { InvalidArgumentError, ProxyConfigError } from "../../../src/core/errors.js";
import { OllamaClient } from "../../../src/clients/ollama.js";
import { createProxy } from "../../../src/proxy/create-proxy.js";
import { loadProxyConfig, parseProxyConfig, type ProxyConfig } from "../../../src/proxy/fleet/proxy-config.js";

const MINIMAL = { backends: { a: { backend: "ollama", model: "qwen3:8b" } }, models: { qwen3: { backends: ["a"] } } };

/** The error parseProxyConfig throws for `text`. */
function refusal(text: string, env: NodeJS.ProcessEnv = {}): ProxyConfigError {
  try {
    parseProxyConfig(text, "proxy.json", env);
  } catch (error) {
    expect(ProxyConfigError.isInstance(error)).toBe(true);
    return error as ProxyConfigError;
  }
  throw new Error("the config was accepted");
}

/** 1-based line and column of the first occurrence of `needle` in `text` (of its `|`, when it has one). */
function where(text: string, needle: string): { line: number; column: number } {
  const found = text.indexOf(needle.replace("|", ""));
  expect(found).toBeGreaterThanOrEqual(0);
  const offset = found + Math.max(0, needle.indexOf("|"));
  const before = text.slice(0, offset).split("\n");
  return { line: before.length, column: before.at(-1)!.length + 1 };
}

describe("a valid config", () => {
  it("gets its defaults, and comments are allowed", () => {
    const config = parseProxyConfig(`// the lab's two GPUs\n${JSON.stringify(MINIMAL, null, 2)}`, "proxy.json");
    expect(config.queue).toEqual({ maxWaiting: 64, maxWaitMs: 30_000 });
    expect(config.health).toEqual({ intervalMs: 5_000, timeoutMs: 2_000 });
    expect(config.models.qwen3!.aliases).toEqual([]);
  });

  const ident = fc.stringMatching(/^[a-z][a-z0-9:._-]{0,11}$/);
  const backend = fc.record(
    {
      backend: fc.constantFrom("ollama", "llamaserver", "llamafile", "anthropic"),
      baseUrl: fc.constantFrom("http://10.0.0.5:8080/v1", "https://gpu.example:11434"),
      model: ident,
      maxConcurrent: fc.integer({ min: 1, max: 64 }),
      mode: fc.constantFrom("native", "prompt", "auto"),
      think: fc.boolean(),
      recommendedSampling: fc.boolean(),
      timeoutMs: fc.integer({ min: 1, max: 600_000 }),
      apiKey: fc.string({ minLength: 1, maxLength: 8 }).filter((k) => !k.startsWith("$")),
      contextLength: fc.integer({ min: 1, max: 1_048_576 }),
    },
    { requiredKeys: ["backend", "model"] },
  );
  /** Backends, then models whose names and aliases are all distinct and name only existing backends. */
  const config = fc.uniqueArray(ident, { minLength: 1, maxLength: 4 }).chain((names) =>
    fc
      .tuple(
        fc.tuple(...names.map(() => backend)),
        fc.uniqueArray(ident, { minLength: 2, maxLength: 8 }),
        fc.array(fc.subarray(names, { minLength: 1 }), { minLength: 1, maxLength: 3 }),
        fc.record({ maxWaiting: fc.nat(500), maxWaitMs: fc.integer({ min: 1, max: 60_000 }) }, { requiredKeys: [] }),
      )
      .map(([defs, ids, routes, queue]) => {
        const models: Record<string, { backends: string[]; aliases: string[] }> = {};
        let next = 0;
        for (const backends of routes) {
          if (next >= ids.length) break;
          const name = ids[next++]!;
          const aliases = ids.slice(next, next + 1);
          next += aliases.length;
          models[name] = { backends, aliases };
        }
        return { backends: Object.fromEntries(names.map((n, i) => [n, defs[i]!])), models, queue } satisfies ProxyConfig;
      }),
  );

  it("round-trips: any valid config parses back to itself plus defaults, however it is indented", () => {
    fc.assert(
      fc.property(config, fc.constantFrom(0, 2, "\t"), (c, indent) => {
        const parsed = parseProxyConfig(JSON.stringify(c, null, indent), "proxy.json");
        expect(parsed).toEqual({ ...c, queue: { maxWaiting: 64, maxWaitMs: 30_000, ...c.queue }, health: { intervalMs: 5_000, timeoutMs: 2_000 } });
      }),
      { numRuns: 150 },
    );
  });

  it("an unknown key anywhere in a backend is refused at its own line and column", () => {
    fc.assert(
      fc.property(config, fc.nat(), fc.constantFrom(2, 4), (c, pick, indent) => {
        const names = Object.keys(c.backends);
        const name = names[pick % names.length]!;
        const bad = { ...c, backends: { ...c.backends, [name]: { ...c.backends[name]!, bogusKey: 1 } } };
        const text = JSON.stringify(bad, null, indent);
        const error = refusal(text);
        expect({ line: error.line, column: error.column }).toEqual(where(text, '"bogusKey"'));
        expect(error.message).toContain(`unknown key "bogusKey"`);
      }),
      { numRuns: 100 },
    );
  });

  it("a bad maxConcurrent is refused at the line of its value", () => {
    fc.assert(
      fc.property(config, fc.constantFrom(0, -1, 1.5, "4", null), (c, value) => {
        const name = Object.keys(c.backends).at(-1)!;
        const bad = { ...c, backends: { ...c.backends, [name]: { ...c.backends[name]!, maxConcurrent: value } } };
        const text = JSON.stringify(bad, null, 2);
        const error = refusal(text);
        const key = where(text.slice(text.indexOf(`"${name}": {`)), '"maxConcurrent": ');
        const line = text.slice(0, text.indexOf(`"${name}": {`)).split("\n").length + key.line - 1;
        expect(error.line).toBe(line);
        expect(error.path).toBe(`backends${/^[A-Za-z_$][\w$]*$/.test(name) ? `.${name}` : `[${JSON.stringify(name)}]`}.maxConcurrent`);
        expect(error.message).toMatch(/maxConcurrent must be a positive integer/);
      }),
      { numRuns: 100 },
    );
  });
});

describe("mistakes are refused with file:line:column", () => {
  const base = (models: string, backends = `"gpu0": { "backend": "ollama", "model": "a" },\n    "gpu1": { "backend": "ollama", "model": "b" }`) =>
    `{\n  "backends": {\n    ${backends}\n  },\n  "models": {\n${models}\n  }\n}\n`;

  it.each([
    ["a model naming a missing backend", base(`    "m": { "backends": ["gpu0", "gpu9"] }`), '"gpu9"', /models\.m\.backends\[1\]: no backend named "gpu9"/],
    ["an alias used twice", base(`    "m": { "backends": ["gpu0"], "aliases": ["x"] },\n    "n": { "backends": ["gpu1"], "aliases": ["y", "x"] }`), '["y", |"x"]', /models\.n\.aliases\[1\]: "x" already names model "m"/],
    ["an alias equal to another model's name", base(`    "m": { "backends": ["gpu0"] },\n    "n": { "backends": ["gpu1"], "aliases": ["m"] }`), '"aliases": [|"m"]', /models\.n\.aliases\[0\]: "m" already names model "m"/],
    ["an unknown key (with a hint)", base(`    "m": { "backends": ["gpu0"] }`, `"gpu0": { "backend": "ollama", "model": "a", "max_concurrent": 2 }`), '"max_concurrent"', /unknown key "max_concurrent" \(did you mean "maxConcurrent"\?\)/],
    ["an unknown backend kind", base(`    "m": { "backends": ["gpu0"] }`, `"gpu0": { "backend": "vllm", "model": "a" }`), '"vllm"', /backend must be one of ollama, llamaserver/],
    ["a missing model", base(`    "m": { "backends": ["gpu0"] }`, `"gpu0": { "backend": "ollama" }`), '{ "backend": "ollama" }', /backends\.gpu0\.model: required key "model" is missing/],
    ["an openai backend without baseUrl", base(`    "m": { "backends": ["gpu0"] }`, `"gpu0": { "backend": "openai", "model": "a" }`), '"openai"', /needs a baseUrl/],
    ["a contextLength that is not a positive integer", base(`    "m": { "backends": ["gpu0"] }`, `"gpu0": { "backend": "ollama", "model": "a", "contextLength": 0 }`), '0 }', /backends\.gpu0\.contextLength: contextLength must be a positive integer/],
    ["a baseUrl that is not http", base(`    "m": { "backends": ["gpu0"] }`, `"gpu0": { "backend": "ollama", "model": "a", "baseUrl": "ftp://x" }`), '"ftp://x"', /http:\/\/ or https:\/\//],
    ["a duplicate key", base(`    "m": { "backends": ["gpu0"] },\n    "m": { "backends": ["gpu1"] }`), '"m": { "backends": ["gpu1"]', /duplicate key "m"/],
    ["a missing comma", base(`    "m": { "backends": ["gpu0"] "aliases": [] }`), '"aliases"', /not valid JSON: comma expected/],
    ["an unclosed object", base(`    "m": { "backends": ["gpu0"] `), "\n}\n|", /not valid JSON: close brace expected/],
  ])("%s", (_name, text, at, message) => {
    const error = refusal(text);
    expect({ line: error.line, column: error.column }).toEqual(where(text, at));
    expect(error.message).toMatch(message);
    expect(error.message.startsWith(`proxy.json:${error.line}:${error.column}: `)).toBe(true);
    expect(error.code).toBe("FORGE_PROXY_CONFIG");
  });

  it("reports every problem, each on its own line", () => {
    const error = refusal(`{\n  "backends": { "a": { "backend": "ollama", "model": "x", "maxConcurrent": 0, "mood": 1 } },\n  "models": {},\n  "queue": { "maxWaitMs": "soon" }\n}`);
    expect(error.issues.map((i) => [i.line, i.path])).toEqual([
      [2, "backends.a.maxConcurrent"],
      [2, "backends.a.mood"],
      [3, "models"],
      [4, "queue.maxWaitMs"],
    ]);
    expect(error.message.split("\n")).toHaveLength(4);
  });

  it("an empty file", () => {
    expect(refusal("  \n").message).toBe("proxy.json:1:1: the file is empty");
  });
});

describe("$NAME api keys", () => {
  const text = JSON.stringify({ ...MINIMAL, backends: { a: { backend: "ollama", model: "x", apiKey: "$GPU_KEY" } } }, null, 2);

  it("are read from the environment", () => {
    expect(parseProxyConfig(text, "proxy.json", { GPU_KEY: "s3cret" }).backends.a!.apiKey).toBe("s3cret");
  });

  it("refuse an unset variable at the key's line", () => {
    const error = refusal(text, {});
    expect(error.line).toBe(where(text, '"$GPU_KEY"').line);
    expect(error.message).toMatch(/environment variable GPU_KEY is not set/);
  });
});

describe("loading and using a config", () => {
  it("loadProxyConfig reads a file; an unreadable path is an InvalidArgumentError", async () => {
    const dir = await mkdtemp(join(tmpdir(), "forge-fleet-"));
    const path = join(dir, "proxy.json");
    await writeFile(path, JSON.stringify(MINIMAL));
    expect((await loadProxyConfig(path)).backends.a!.model).toBe("qwen3:8b");
    await expect(loadProxyConfig(join(dir, "missing.json"))).rejects.toThrow(InvalidArgumentError);
    await writeFile(path, '{ "backends": 1 }');
    await expect(loadProxyConfig(path)).rejects.toThrow(/proxy\.json:1:15: backends:/);
  });

  it("createProxy takes exactly one of client and config, and checks a config given in code", () => {
    const client = new OllamaClient({ model: "qwen3:8b", think: false });
    expect(() => createProxy({})).toThrow(/exactly one of `client`.*or `config`/);
    expect(() => createProxy({ client, config: MINIMAL as ProxyConfig })).toThrow(/exactly one/);
    expect(() => createProxy({ config: { ...MINIMAL, models: { q: { backends: ["nope"] } } } as ProxyConfig })).toThrow(/models\.q\.backends\[0\]: no backend named "nope"/);
    expect(() => createProxy({ config: MINIMAL as ProxyConfig, forwardModel: false })).toThrow(/forwardModel/);
    expect(() => createProxy({ config: MINIMAL as ProxyConfig, model: "other" })).toThrow(/"other" is not a model name or alias/);
  });
});
