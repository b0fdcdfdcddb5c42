/**
 * `forge-ts proxy --config` as a process: prints one line per backend with its health, serves
 * through the fleet, exits 0 on SIGINT; a config with mistakes, or backend flags beside
 * --config, exit 2 with the reason.
 */
import { execFile, spawn } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { ask, chat, contentOf, fakeBackend, fleetConfig, refusedBackend } from "./support/fleet-rig.js";
import { cliArgs } from "../../support/cli.js";

const run = promisify(execFile);
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("FORGE_")));
const cli = (...args: string[]) => cliArgs("src/cli/main.ts", "proxy", ...args);
const children: ReturnType<typeof spawn>[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
});

async function configFile(text: string): Promise<string> {
  const path = join(await mkdtemp(join(tmpdir(), "forge-fleet-cli-")), "proxy.json");
  await writeFile(path, text);
  return path;
}

describe("forge-ts proxy --config", () => {
  it("reports each backend's health at start, serves through the fleet, exits 0 on SIGINT", async () => {
    const [gpu0, gpu1] = [await fakeBackend("gpu0"), await refusedBackend("gpu1")];
    const config = fleetConfig([gpu0, gpu1], { maxConcurrent: 2 });
    const path = await configFile(JSON.stringify(config, null, 2));
    const child = spawn(process.execPath, cli("--config", path, "--port", "0"), { env: { ...env, NO_COLOR: "1", FORGE_BACKEND: "ollama" } });
    children.push(child);
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    const url = await new Promise<string>((resolve, reject) => {
      const check = () => {
        const m = /base URL (http:\/\/127\.0\.0\.1:\d+)\/v1/.exec(out);
        if (m && out.includes("model m") && out.includes("backend gpu1")) resolve(m[1]!);
      };
      child.stdout.on("data", check);
      child.stderr.on("data", check);
      child.once("exit", (code) => reject(new Error(`exited ${code}: ${out}`)));
    });
    expect(out).toMatch(/backend gpu0: ollama gpu0-model at http:\/\/127\.0\.0\.1:\d+, 2 at once: up/);
    expect(out).toMatch(/backend gpu1: ollama gpu1-model at http:\/\/127\.0\.0\.1:\d+, 2 at once: DOWN \(.+\)/);
    expect(out).toContain("model m (aliases: alias-m) → gpu0, gpu1");
    expect(await contentOf(await chat(url, { model: "alias-m", messages: ask("hi") }))).toBe("hello from gpu0");
    expect((await fetch(`${url}/health`)).status).toBe(503);
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    child.kill("SIGINT");
    expect(await exited).toBe(0);
  }, 300_000);

  it("exits 2 on a config with mistakes, naming file, line and column", async () => {
    const path = await configFile('{\n  "backends": { "a": { "backend": "ollama", "model": "x" } },\n  "models": { "m": { "backends": ["b"] } }\n}\n');
    const error = (await run(process.execPath, cli("--config", path), { env }).catch((e: unknown) => e)) as { code: number; stderr: string };
    expect(error.code).toBe(2);
    expect(error.stderr).toContain(`${path}:3:35: models.m.backends[0]: no backend named "b"`);
  }, 300_000);

  it.each([
    [["--backend", "ollama"], "--backend"],
    [["--model", "m", "--pin-model"], "--model, --pin-model"],
  ])("exits 2 when --config is combined with %j", async (flags, named) => {
    const path = await configFile("{}");
    const error = (await run(process.execPath, cli("--config", path, ...flags), { env }).catch((e: unknown) => e)) as { code: number; stderr: string };
    expect(error.code).toBe(2);
    expect(error.stderr).toContain(`--config: cannot be combined with ${named}`);
  }, 300_000);
});
