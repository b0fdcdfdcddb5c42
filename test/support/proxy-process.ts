/**
 * `forge-ts proxy` as a process: spawned, its output collected, ready once its start-up lines
 * say what the test waits for (an event on its output, never a sleep). The caller kills it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { cliArgs } from "./cli.js";

export interface ProxyProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
}

/**
 * @example
 * const p = await startProxyProcess(["--backend", "ollama", "--model", "m", "--port", "0"], env, (out) => out.includes("window:"));
 */
export async function startProxyProcess(args: readonly string[], env: NodeJS.ProcessEnv, ready: (stdout: string) => boolean, children?: ChildProcess[]): Promise<ProxyProcess> {
  const child = spawn(process.execPath, cliArgs("src/cli/main.ts", "proxy", ...args), { env });
  children?.push(child);
  let stdout = "";
  let stderr = "";
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (d: Buffer) => {
      stdout += d.toString();
      if (ready(stdout)) resolve();
    });
    child.once("exit", (code) => reject(new Error(`forge-ts proxy exited ${code}: ${stderr}`)));
  });
  return { child, stdout: () => stdout, stderr: () => stderr };
}
