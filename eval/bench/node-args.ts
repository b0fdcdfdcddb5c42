/**
 * The argv after `process.execPath` that runs a module: TypeScript through tsx, JavaScript as it
 * is (a test passes the built twin of a harness's child: tsx's loader costs about 2 s of CPU per
 * process, and the harnesses start dozens).
 *
 * @example
 * spawn(process.execPath, nodeArgs("eval/bench/chaos-worker.ts", redisUrl)); // ["--import", "tsx", "eval/bench/chaos-worker.ts", redisUrl]
 */
export function nodeArgs(module: string, ...args: string[]): string[] {
  return module.endsWith(".ts") ? ["--import", "tsx", module, ...args] : [module, ...args];
}
