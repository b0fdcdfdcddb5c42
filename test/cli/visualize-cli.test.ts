/**
 * `forge-ts visualize` as a process: serves the page and the run list from a store, takes a run
 * from `npm start -- --visualize` (the demo in its own process), shuts down on SIGINT; from a
 * checkout whose page was never built it builds the page first; bad flags exit 2, a port in use
 * exits 1, and a demo asked to visualize with no visualizer exits 1.
 */
import { execFile, spawn } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import type { RunSummary } from "../../visualizer/protocol.js";
import { visualizeMain } from "../../src/cli/visualize.js";
import { cliArgs } from "../support/cli.js";
import { REPO_ROOT } from "../support/cli-build.js";
import { inProcess } from "../support/in-process-cli.js";
import { REFUSED_URL } from "../support/refused-url.js";

const run = promisify(execFile);
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("FORGE_")));
const cli = (...args: string[]) => cliArgs("src/cli/main.ts", "visualize", ...args);
const children: ReturnType<typeof spawn>[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
const tempDir = () => {
  const dir = mkdtempSync(path.join(tmpdir(), "forge-viz-cli-"));
  dirs.push(dir);
  return dir;
};

/** The CLI as built for the tests, or `argv` (after the node binary) in `cwd`. */
function start(args: string[], argv = cli(...args), cwd = REPO_ROOT) {
  const child = spawn(process.execPath, argv, { cwd, env: { ...env, NO_COLOR: "1" } });
  children.push(child);
  let stdout = "";
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const url = new Promise<string>((resolve, reject) => {
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
      // The banner's last line is out: the whole banner is.
      const m = /visualizer on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout);
      if (m && stdout.includes("watch a run:")) resolve(m[1]!);
    });
    child.once("exit", (code) => reject(new Error(`exited ${code}: ${stderr}`)));
  });
  return { child, url, output: () => ({ stdout, stderr }) };
}

describe("forge-ts visualize (CLI)", () => {
  it("serves the page, takes a demo run streamed to it, lists it from the store, and exits 0 on SIGINT", async () => {
    const store = tempDir();
    const server = start(["--port", "0", "--store", store]);
    const url = await server.url;
    expect(server.output().stdout).toMatch(/page \d+\.\d KiB, no outside requests/);
    expect(server.output().stdout).toContain(`stored runs: ${store}`);
    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("forge-ts visualizer");

    const demo = await run(process.execPath, cliArgs("src/cli/demo.ts", "--visualize", "--visualizer-url", url, "--latency", "0", "--store", store), {
      env: { ...env, NO_COLOR: "1" },
    });
    expect(demo.stdout).toContain(`watch  ${url}`);
    const runId = /stored\s+run (\S+)/.exec(demo.stdout)?.[1];
    const runs = (await (await fetch(`${url}/api/runs`)).json()).runs as RunSummary[];
    expect(runs).toEqual([expect.objectContaining({ runId, workflow: "supplier_quote", stored: true, replayable: true, status: "done" })]);
    expect(runs[0]!.events).toBeGreaterThan(50);

    const exited = new Promise<number | null>((resolve) => server.child.once("exit", resolve));
    server.child.kill("SIGINT");
    expect(await exited).toBe(0);
    expect(server.output().stdout).toContain("SIGINT, shutting down");
  }, 300_000);

  it("from a checkout whose page was never built, builds it on first use and serves it (two first starts at once)", async () => {
    // A fresh clone's sources, no visualizer/page/js/, run through tsx as a checkout runs them.
    const checkout = tempDir();
    for (const dir of ["src", "machines", "visualizer"]) {
      cpSync(path.join(REPO_ROOT, dir), path.join(checkout, dir), { recursive: true, filter: (from) => !/[\\/]visualizer[\\/]page[\\/](js|\.js-build-)/.test(from) });
    }
    for (const file of ["package.json", "tsconfig.json"]) cpSync(path.join(REPO_ROOT, file), path.join(checkout, file));
    symlinkSync(path.join(REPO_ROOT, "node_modules"), path.join(checkout, "node_modules"), "dir");
    const js = path.join(checkout, "visualizer", "page", "js");
    expect(() => readdirSync(js)).toThrow(/ENOENT/);

    const servers = [0, 1].map(() => start([], ["--import", "tsx", "src/cli/main.ts", "visualize", "--port", "0", "--no-store"], checkout));
    const urls = await Promise.all(servers.map((s) => s.url));
    // Each serves the whole page, every module as the tests' own build of the same sources has it.
    const built = readdirSync(path.join(REPO_ROOT, "visualizer", "page", "js")).filter((f) => f.endsWith(".js")).sort();
    expect(readdirSync(js).sort()).toEqual(built);
    for (const url of urls) {
      expect(await (await fetch(url)).text()).toContain('<script type="module" src="js/app.js">');
      for (const file of built) {
        const served = await fetch(`${url}/js/${file}`);
        expect(served.status, file).toBe(200);
        expect(await served.text(), file).toBe(readFileSync(path.join(REPO_ROOT, "visualizer", "page", "js", file), "utf8"));
      }
    }
    for (const server of servers) {
      const exited = new Promise<number | null>((resolve) => server.child.once("exit", resolve));
      server.child.kill("SIGTERM");
      expect(await exited, server.output().stderr).toBe(0);
    }
  }, 300_000);

  it("exits 2 on a bad flag with one line on stderr (the process)", async () => {
    const failed = await run(process.execPath, cli("--frobnicate"), { env }).then(
      () => expect.fail("should have exited 2"),
      (e: { code: number; stderr: string }) => e,
    );
    expect(failed.code).toBe(2);
    expect(failed.stderr.trim().split("\n")).toHaveLength(1);
    expect(failed.stderr).toContain("frobnicate");
  });

  it.each([
    [["--port", "70000"], "--port"],
    [["--no-store", "--store", "x"], "--no-store"],
    [["--max-events", "5"], "--max-events"],
    [["--workflow", "no/such/module.ts"], "cannot import no/such/module.ts"],
  ])("exits 2 on bad flags %j", async (args, message) => {
    const { code, stderr } = await inProcess((a) => visualizeMain(a, process), args);
    expect(code).toBe(2);
    expect(stderr).toContain(message);
  });

  it("exits 1 when its port is taken", async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      const failed = await run(process.execPath, cli("--port", String(port), "--no-store"), { env }).then(
        () => expect.fail("should have exited 1"),
        (e: { code: number; stderr: string }) => e,
      );
      expect(failed.code).toBe(1);
      expect(failed.stderr).toContain(`cannot listen on 127.0.0.1:${port}`);
    } finally {
      blocker.close();
    }
  });

  it("prints its help", async () => {
    const { stdout } = await run(process.execPath, cli("--help"), { env });
    for (const flag of ["--port", "--host", "--store", "--no-store", "--workflow", "--max-events", "--stately"]) expect(stdout).toContain(flag);
  });
});

describe("npm start -- --visualize", () => {
  it("exits 1 before running anything when no visualizer answers", async () => {
    const failed = await run(process.execPath, cliArgs("src/cli/demo.ts", "--visualize", "--visualizer-url", REFUSED_URL), {
      env: { ...env, NO_COLOR: "1" },
    }).then(
      () => expect.fail("should have exited 1"),
      (e: { code: number; stdout: string; stderr: string }) => e,
    );
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain(`no visualizer answers at ${REFUSED_URL}`);
    expect(failed.stderr).toContain("forge-ts visualize");
    expect(failed.stdout).not.toContain("→ inferring");
  });

  it("refuses --latency for a real backend", async () => {
    const failed = await run(process.execPath, cliArgs("src/cli/demo.ts", "--backend", "ollama", "--model", "m", "--latency", "5"), { env }).then(
      () => expect.fail("should have exited 2"),
      (e: { code: number; stderr: string }) => e,
    );
    expect(failed.code).toBe(2);
    expect(failed.stderr).toContain("--latency");
  });
});
