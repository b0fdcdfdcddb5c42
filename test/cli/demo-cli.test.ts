import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("FORGE_")));
const demo = (args: string[]) =>
  run(process.execPath, ["--import", "tsx", "src/cli/demo.ts", ...args], { env: { ...env, NO_COLOR: "1" } });

describe("npm start (src/cli/demo.ts)", () => {
  it("runs the supplier quote on the simulated model, printing transitions, rescue, nudge and result", async () => {
    const { stdout } = await demo([]);
    expect(stdout).toContain("→ compacting");
    expect(stdout).toContain("→ executingTools.running");
    expect(stdout).toMatch(/rescue +↳ the model wrote that call as text/);
    expect(stdout).toContain("[StepEnforcementError]");
    expect(stdout).toMatch(/result +submit_quote/);
    expect(stdout).toMatch(/"unit_price": ?0\.34/);
  }, 60_000);

  it("streams deltas with --stream and still prints the result", async () => {
    const { stdout } = await demo(["--stream", "--seed", "6"]);
    expect(stdout).toMatch(/stream +\{"part_number":"PN-4471"\}/);
    expect(stdout).toMatch(/"unit_price": ?0\.34/);
  }, 60_000);

  it("rejects an unknown backend with exit code 2 and a clear message", async () => {
    const error = await demo(["--backend", "gpt5"]).catch((e: unknown) => e as { code: number; stderr: string });
    expect(error).toMatchObject({ code: 2 });
    expect((error as { stderr: string }).stderr).toContain('unknown backend "gpt5"');
  }, 60_000);

  it("fails with exit code 1 and the typed error when the backend is unreachable", async () => {
    const { createServer } = await import("node:net");
    const port = await new Promise<number>((resolve) => {
      const srv = createServer();
      srv.listen(0, "127.0.0.1", () => {
        const p = (srv.address() as { port: number }).port;
        srv.close(() => resolve(p));
      });
    });
    const error = await demo(["--backend", "ollama", "--model", "qwen3:8b", "--base-url", `http://127.0.0.1:${port}`, "--budget", "4096"]).catch(
      (e: unknown) => e as { code: number; stderr: string },
    );
    expect(error).toMatchObject({ code: 1 });
    expect((error as { stderr: string }).stderr).toContain("FORGE_BACKEND");
  }, 60_000);
});

describe("forge-ts command (src/cli/main.ts)", () => {
  const cli = (args: string[]) => run(process.execPath, ["--import", "tsx", "src/cli/main.ts", ...args], { env: { ...env, NO_COLOR: "1" } });
  it("prints its version and runs the demo subcommand", async () => {
    expect((await cli(["--version"])).stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    expect((await cli(["demo", "--quiet"])).stdout).toMatch(/"unit_price": ?0\.34/);
  }, 60_000);
  it("rejects an unknown command with exit code 2", async () => {
    await expect(cli(["fly"])).rejects.toMatchObject({ code: 2 });
  }, 60_000);
});
