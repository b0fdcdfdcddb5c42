/**
 * The one command-line parser of the `forge-ts` commands: node:util's parseArgs, strict, with
 * negative numbers taken as values. parseArgs reads `--runs -1` as two options and throws its
 * "ambiguous" error, which says nothing about what is wrong with -1; rewriting it to
 * `--runs=-1` lets the flag's own check say "--runs must be a positive integer, got -1".
 */
import { parseArgs, type ParseArgsConfig } from "node:util";

const NEGATIVE_NUMBER = /^-\d/;

/** `--flag -1` → `--flag=-1` for every string option of `options`; nothing else changes. */
export function joinNegativeValues(args: readonly string[], options: ParseArgsConfig["options"] = {}): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const next = args[i + 1];
    const name = arg.startsWith("--") && !arg.includes("=") ? arg.slice(2) : undefined;
    if (name !== undefined && options[name]?.type === "string" && next !== undefined && NEGATIVE_NUMBER.test(next)) {
      out.push(`${arg}=${next}`);
      i++;
    } else out.push(arg);
  }
  return out;
}

/**
 * parseArgs with `strict: true` and negative numbers as values.
 *
 * @example const { values } = parseCliArgs({ args, options: { runs: { type: "string" } } });
 */
export function parseCliArgs<const T extends ParseArgsConfig>(config: T & { args: readonly string[] }): ReturnType<typeof parseArgs<T>> {
  return parseArgs<T>({ strict: true, ...config, args: joinNegativeValues(config.args, config.options) });
}
