import { spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { describe, expect, it, vi } from "vitest";
import { freePort, isAlive } from "./helpers.js";

const CHILD = fileURLToPath(new URL("./parent-exit-child.ts", import.meta.url));

async function runParent(how: "exit" | "sigterm"): Promise<{ serverPid: number; code: number | null; signal: NodeJS.Signals | null }> {
  const parent = spawn(process.execPath, ["--import", "tsx", CHILD, how, String(await freePort())], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  parent.stdout.on("data", (c: Buffer) => (out += c.toString("utf8")));
  const [code, signal] = (await once(parent, "exit")) as [number | null, NodeJS.Signals | null];
  const serverPid = (JSON.parse(out.trim()) as { pid: number }).pid;
  return { serverPid, code, signal };
}

/** The kill is delivered asynchronously after the parent is gone: wait for the server to be gone too. */
const goneSoon = (pid: number) => vi.waitFor(() => expect(isAlive(pid)).toBe(false), { timeout: 30_000, interval: 10 });

describe("parent-exit hook", () => {
  it("kills the server group when the parent calls process.exit", async () => {
    const { serverPid, code } = await runParent("exit");
    expect(code).toBe(0);
    await goneSoon(serverPid);
  });

  it("kills the server group on SIGTERM and still lets the parent die of the signal", async () => {
    const { serverPid, signal } = await runParent("sigterm");
    expect(signal).toBe("SIGTERM");
    await goneSoon(serverPid);
  });
});
