/**
 * Tiny flag parser for the eval CLIs: `--flag value`, `--flag a b c` (lists run until the next
 * flag) and boolean `--flag`. Unknown flags and missing values fail loudly.
 */
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

export function int(p: ParsedFlags, name: string, fallback: number): number {
  const raw = one(p, name);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 0) throw new InvalidArgumentError(`--${name}`, `expected a non-negative integer, got "${raw}"`);
  return n;
}
