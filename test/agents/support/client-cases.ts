/**
 * The agent cases for client libraries that run in the test's own process (ollama-js,
 * @langchain/ollama, ollama-ai-provider-v2 under the AI SDK): each case gets its own scripted
 * model (fake-ollama.ts), forge-ts proxy in front of it or nothing, and a fresh working directory;
 * the library runs the loop its users write (the task, the file-writing tool, the calls executed,
 * the results sent back) and the suite checks what agent-suite.ts checks of the agents. The
 * libraries only talk to 127.0.0.1 (loopbackOnly refuses anything else), so no namespace.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { loopbackOnly } from "../../proxy/clients/support/loopback-only.js";
import { expectProxyDidTheWork, expectTextCallNeverRun } from "./case-expect.js";
import { caseProxy, proxyCounts, type ProxyCounts } from "./case-proxy.js";
import { runDocSample } from "./doc-sample.js";
import { startFakeOllama, type ModelTurnRecord } from "./fake-ollama.js";
import { liftHeader, liftRow } from "./lift-table.js";
import { CASES, FILE_CONTENT, FILE_NAME, FINAL_TEXT, TEXT_CASES, type CaseName } from "./turn-policy.js";

export { MODEL } from "./fake-ollama.js";
export { FILE_JSON, TASK } from "./turn-policy.js";

/** A loop gives up after this many model turns (the cases need at most three). */
export const MAX_TURNS = 6;

/** The client's one tool: `findWriteTool` recognises it (a write name, `path` and `content`). */
export const WRITE_FILE = {
  name: "write_file",
  description: "Write a UTF-8 text file, replacing it if it exists.",
  schema: z.object({ path: z.string().describe("Path of the file to write"), content: z.string().describe("The whole contents of the file") }),
};
/** The same arguments as JSON Schema, for libraries that take the schema itself (ollama-js). */
export const WRITE_FILE_JSON_SCHEMA = z.toJSONSchema(WRITE_FILE.schema) as { type: "object"; properties: Record<string, { type: string; description?: string }>; required: string[] };

/** One call the client executed, and whether it did what it asked. */
export interface ExecutedCall {
  name: string;
  ok: boolean;
}

/** Where a case's tool calls run: its working directory, and every call run there. */
export interface Workbench {
  workdir: string;
  executed: ExecutedCall[];
  /** Runs one call; the text is the tool result the client sends back. */
  run(name: string, args: unknown): string;
}

/**
 * @example
 * workbench("/tmp/case").run("write_file", { path: "hello.txt", content: "forge" }); // "Wrote 5 bytes to hello.txt"
 */
export function workbench(workdir: string): Workbench {
  const executed: ExecutedCall[] = [];
  const run = (name: string, args: unknown): string => {
    if (name !== WRITE_FILE.name) {
      executed.push({ name, ok: false });
      return `Error: unknown tool "${name}"; the tools are: ${WRITE_FILE.name}`;
    }
    const parsed = WRITE_FILE.schema.safeParse(args);
    if (!parsed.success) {
      executed.push({ name, ok: false });
      return `Error: invalid arguments for ${name}: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`;
    }
    writeFileSync(path.resolve(workdir, parsed.data.path), parsed.data.content);
    executed.push({ name, ok: true });
    return `Wrote ${Buffer.byteLength(parsed.data.content)} bytes to ${parsed.data.path}`;
  };
  return { workdir, executed, run };
}

/** What a loop is given: the base URL to point the library at (the proxy, or the model itself). */
export interface ClientRun {
  url: string;
  bench: Workbench;
}

/** A library's tool loop; resolves with its final text answer (null: it ran out of turns). */
export type ClientLoop = (run: ClientRun) => Promise<string | null>;

export interface ClientOutcome {
  case: CaseName;
  mode: "proxy" | "direct";
  /** hello.txt's contents after the run, or null when nothing created it. */
  file: string | null;
  answer: string | null;
  /** What the loop threw, if it did. */
  error?: string;
  executed: ExecutedCall[];
  /** The chat requests the model answered, with its replies. */
  turns: ModelTurnRecord[];
  proxy?: ProxyCounts;
  /** Every request the model server got (method and path). */
  requests: string[];
}

/**
 * One case, one way: the scripted model, the proxy in front of it (`proxy`), the loop.
 *
 * @example
 * const o = await runClientCase("hermes", "proxy", loop); // o.file === "forge"
 */
export async function runClientCase(kase: CaseName, mode: "proxy" | "direct", loop: ClientLoop): Promise<ClientOutcome> {
  const workdir = mkdtempSync(path.join(tmpdir(), "forge-client-"));
  const model = await startFakeOllama(kase, workdir);
  const proxy = mode === "proxy" ? caseProxy(model.url) : undefined;
  try {
    const url = proxy ? (await proxy.listen({ port: 0, host: "127.0.0.1" })).url : model.url;
    const bench = workbench(workdir);
    let answer: string | null = null;
    let error: string | undefined;
    try {
      answer = await loop({ url, bench });
    } catch (e) {
      // A library that throws mid-case fails the case with what it said, not the whole file.
      error = e instanceof Error ? (e.stack ?? e.message) : String(e);
    }
    const file = path.join(workdir, FILE_NAME);
    return {
      case: kase,
      mode,
      file: existsSync(file) ? readFileSync(file, "utf8") : null,
      answer,
      ...(error !== undefined ? { error } : {}),
      executed: bench.executed,
      turns: model.turns,
      ...(proxy ? { proxy: proxyCounts(proxy.stats()) } : {}),
      requests: model.paths(),
    };
  } finally {
    await proxy?.close();
    await model.close();
    rmSync(workdir, { recursive: true, force: true });
  }
}

const diagnosis = (o: ClientOutcome): string => JSON.stringify(o, null, 1);

/**
 * Every case through the proxy and every text case directly, for each of the file's loops (a
 * row of the lift table each: one library, streamed or not...); prints the rows at the end.
 * With `page`, that docs page's sample too, run as the page shows it, every case through the proxy.
 *
 * @example
 * clientSuite("ollama-js", { "ollama-js (stream)": (run) => chatLoop(run, true) }, { page: "docs/clients/ollama-js.md" });
 */
export function clientSuite(client: string, loops: Record<string, ClientLoop>, options: { page?: string } = {}): void {
  loopbackOnly();
  const outcomes = new Map<string, ClientOutcome[]>(Object.keys(loops).map((row) => [row, []]));
  let started = 0;
  beforeAll(() => {
    started = performance.now();
  });
  afterAll(() => {
    const runs = [...outcomes.values()].reduce((n, o) => n + o.length, 0);
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    const rows = [...outcomes].map(([row, o]) => liftRow(row, o));
    console.log(`[agents] ${client}: ${runs} runs in ${seconds} s\n${liftHeader("client")}\n${rows.join("\n")}`);
  });
  const run = async (row: string, kase: CaseName, mode: "proxy" | "direct"): Promise<ClientOutcome> => {
    const o = await runClientCase(kase, mode, loops[row]!);
    outcomes.get(row)!.push(o);
    return o;
  };

  for (const row of Object.keys(loops)) {
    describe(`${row} through forge-ts proxy`, () => {
      it.each(CASES)("%s: finishes the task (hello.txt contains forge)", async (kase) => {
        const o = await run(row, kase, "proxy");
        expect(o.error, diagnosis(o)).toBeUndefined();
        expect(o.file, diagnosis(o)).toBe(FILE_CONTENT);
        expect(o.answer, diagnosis(o)).toBe(FINAL_TEXT);
        // The library only ever got the correct call: rescued, or retried inside the proxy.
        expect(o.executed, diagnosis(o)).toEqual([{ name: WRITE_FILE.name, ok: true }]);
        expectProxyDidTheWork(kase, o.proxy, diagnosis(o));
      });
    });

    describe(`${row} directly against the model (no proxy)`, () => {
      it.each(TEXT_CASES)("%s: the call written as text is never run", async (kase) => {
        const o = await run(row, kase, "direct");
        expect(o.error, diagnosis(o)).toBeUndefined();
        expectTextCallNeverRun(o, diagnosis(o));
        expect(o.executed, diagnosis(o)).toEqual([]);
        // The library handed its user the call, as text, for the final answer.
        expect(o.answer, diagnosis(o)).toBe(o.turns[0]?.reply.content);
      });
    });
  }

  const page = options.page;
  if (page === undefined) return;
  describe(`${page}: the sample, as the page shows it, through forge-ts proxy`, () => {
    it.each(CASES)("%s: finishes the task (hello.txt contains forge)", async (kase) => {
      const o = await runClientCase(kase, "proxy", async ({ url }) => {
        await runDocSample(page, url);
        return null;
      });
      expect(o.error, diagnosis(o)).toBeUndefined();
      expect(o.file, diagnosis(o)).toBe(FILE_CONTENT);
      expectProxyDidTheWork(kase, o.proxy, diagnosis(o));
    });
  });
}
