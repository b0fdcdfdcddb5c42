/**
 * Tiny flag parser for the eval CLIs: `--flag value`, `--flag a b c` (lists run until the next
 * flag) and boolean `--flag`. Unknown flags and missing values fail loudly.
 */
import { existsSync, statSync } from "node:fs";
import path from "node:path";
import { nonNegativeInt, positiveInt } from "../../src/cli-kit/int-flag.js";
import { InvalidArgumentError } from "../../src/core/index.js";

export type FlagKind = "bool" | "one" | "many";
export type ParsedFlags = { positional: string[]; flags: Record<string, string[] | true> };

/** @example parseFlags(["--runs", "5", "--scenario", "a", "b"], { runs: "one", scenario: "many" }) */
export function parseFlags(argv: readonly string[], spec: Record<string, FlagKind>): ParsedFlags {
  const positional: string[] = [];
  const flags: Record<string, string[] | true> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith("--")) {
      positional.push(arg);
      continue;
    }
    const [name, inline] = arg.slice(2).split("=", 2) as [string, string | undefined];
    const kind = spec[name];
    if (!kind) throw new InvalidArgumentError(`--${name}`, `unknown flag; known: ${Object.keys(spec).map((k) => `--${k}`).join(", ")}`);
    if (kind === "bool") {
      flags[name] = true;
      continue;
    }
    const values: string[] = inline !== undefined ? [inline] : [];
    while (inline === undefined && i + 1 < argv.length && !argv[i + 1]!.startsWith("--")) {
      values.push(argv[++i]!);
      if (kind === "one") break;
    }
    if (values.length === 0) throw new InvalidArgumentError(`--${name}`, "needs a value");
    flags[name] = [...(Array.isArray(flags[name]) ? (flags[name] as string[]) : []), ...values];
  }
  return { positional, flags };
}

export function one(p: ParsedFlags, name: string): string | undefined {
  const v = p.flags[name];
  return Array.isArray(v) ? v[v.length - 1] : undefined;
}

export function many(p: ParsedFlags, name: string): string[] {
  const v = p.flags[name];
  return Array.isArray(v) ? v : [];
}

/** A flag that must be 0 or more (src/cli-kit/int-flag.ts checks every command's integers). */
export function int(p: ParsedFlags, name: string, fallback: number): number {
  return nonNegativeInt(name, one(p, name), fallback);
}

/** A flag that must be 1 or more: "--runs must be a positive integer, got -1". */
export function count(p: ParsedFlags, name: string, fallback: number): number {
  return positiveInt(name, one(p, name), fallback);
}

/**
 * A results file to append to, checked before any run starts: its directory must exist (else
 * the first record would fail with ENOENT after the first run, minutes in).
 */
export function outFile(file: string, flag = "--out"): string {
  const dir = path.dirname(path.resolve(file));
  if (!existsSync(dir)) throw new InvalidArgumentError(flag, `cannot write ${file}: the directory ${dir} does not exist`);
  if (existsSync(file) && statSync(file).isDirectory()) throw new InvalidArgumentError(flag, `${file} is a directory; give a file`);
  return file;
}
