/**
 * The promise to Ollama users, as they would try it: a script written for Ollama (the
 * `ollama` library's default client, port 11434) runs unchanged against `forge-ts proxy --port
 * 11434` in front of a llama-server (its wire format), tools and streaming included — and the
 * call the model writes as Hermes text is run.
 */
import { execFile, spawn } from "node:child_process";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { sendJson, sendSse, useFakeServers } from "../clients/support/fake-server.js";
import { openaiCompletion, openaiSseEvents, type ModelReply } from "../clients/support/wire.js";
import { cliArgs } from "../support/cli.js";
import { startProxyProcess } from "../support/proxy-process.js";
import { hermes, windowAnswer } from "../proxy/support/harness.js";

const run = promisify(execFile);
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("FORGE_")));
const serve = useFakeServers();
const children: ReturnType<typeof spawn>[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
});

describe("an ollama-library script against forge-ts proxy --port 11434 in front of llama-server", () => {
  it("lists, shows, and runs the tool the model wrote as text, streamed and not", async () => {
    const backend = await serve((req, res) => {
      if (req.path === "/props") return sendJson(res, 200, windowAnswer("/props", 16_384));
      if (req.path === "/v1/models") return sendJson(res, 200, { object: "list", data: [{ id: "qwen3-8b", object: "model", owned_by: "llamacpp" }] });
      const results = (req.body.messages as { role: string }[]).filter((m) => m.role === "tool").length;
      const reply: ModelReply = results === 0 ? { content: `Let me check.\n${hermes("get_weather", { city: "Oslo" })}` } : { content: "It is 12C and clear in Oslo." };
      return req.body.stream ? sendSse(res, openaiSseEvents(reply, "qwen3-8b")) : sendJson(res, 200, openaiCompletion(reply, "qwen3-8b"));
    });
    const { child, stdout: printedByProxy } = await startProxyProcess(["--backend", "llamaserver", "--model", "qwen3-8b", "--base-url", `${backend.url}/v1`, "--port", "11434"], env, (out) => out.includes("Codex:"), children);
    const stdout = printedByProxy();
    expect(stdout).toContain("OLLAMA_HOST=http://127.0.0.1:11434");
    expect(stdout).toContain("window: 16384 tokens");
    expect(stdout).toContain("model_context_window = 16384");

    const { stdout: printed } = await run(process.execPath, ["test/fixtures/clients/ollama-weather.mjs"], { env });
    const seen = JSON.parse(printed) as { models: string[]; capabilities: string[]; plain: { answer: string; ran: unknown[] }; streamed: { answer: string; ran: unknown[] } };
    expect(seen.models).toEqual(["qwen3-8b"]);
    expect(seen.capabilities).toContain("tools");
    for (const t of [seen.plain, seen.streamed]) {
      expect(t.ran).toEqual([{ index: 0, name: "get_weather", arguments: { city: "Oslo" } }]);
      expect(t.answer).toBe("It is 12C and clear in Oslo.");
    }
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    child.kill("SIGINT");
    expect(await exited).toBe(0);
  }, 120_000);

  it("refuses --port 11434 while its Ollama backend would be itself (Ollama's default base URL)", async () => {
    const error = (await run(process.execPath, cliArgs("src/cli/main.ts", "proxy", "--backend", "ollama", "--model", "qwen3:8b", "--port", "11434"), { env }).catch((e: unknown) => e)) as { code: number; stderr: string };
    expect(error.code).toBe(2);
    expect(error.stderr).toContain("is this proxy's own address (--port 11434)");
    expect(error.stderr).toContain("OLLAMA_HOST=127.0.0.1:11435 ollama serve");
  }, 120_000);
});
