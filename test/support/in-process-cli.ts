/**
 * A command's main run inside the test process, as `forge-ts` runs it (exitCodeOf: the exit
 * code, a thrown error as one stderr line), with what it printed. For the many rows of a
 * command's flag checks: each spawned `node` costs about half a second of CPU loading the
 * command's modules, while the rows exercise only its parser. Each command file keeps one
 * spawned row, so the real process path (exit code, the one line) stays covered.
 */
import { vi } from "vitest";
import { exitCodeOf } from "../../src/cli-kit/run-cli.js";

export interface InProcessResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `main(args)` with FORGE_* variables unset (as the spawned tests' env has them) and
 * console.log / console.error / console.warn captured.
 *
 * @example
 * const { code, stderr } = await inProcess((a) => proxyMain(a), ["--frobnicate"]); // 2, "Unknown option '--frobnicate' (see --help)"
 */
export async function inProcess(main: (args: readonly string[]) => Promise<number | void> | number | void, args: readonly string[]): Promise<InProcessResult> {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const line = (to: string[]) => (...parts: unknown[]) => void to.push(parts.map(String).join(" "));
  const spies = [vi.spyOn(console, "log").mockImplementation(line(stdout)), vi.spyOn(console, "error").mockImplementation(line(stderr)), vi.spyOn(console, "warn").mockImplementation(line(stderr))];
  const forge = Object.entries(process.env).filter(([name]) => name.startsWith("FORGE_"));
  for (const [name] of forge) delete process.env[name];
  try {
    const code = await exitCodeOf(main, args);
    return { code, stdout: stdout.join("\n"), stderr: stderr.join("\n") };
  } finally {
    for (const spy of spies) spy.mockRestore();
    for (const [name, value] of forge) process.env[name] = value;
  }
}
