/**
 * The command line that continues a run, as every command that stops one prints it (runs,
 * Ctrl-C, eval batches): shared below src/cli and eval so neither imports the other for it.
 */

/** The flags the hints repeat, as the user gave them (a store only when named on the command line). */
export interface HintFlags {
  store?: string | undefined;
  workflow?: string | undefined;
  backend?: string | undefined;
  model?: string | undefined;
  "base-url"?: string | undefined;
  mode?: string | undefined;
  think?: string | undefined;
}

/** A word the shell passes through unchanged, else single-quoted. */
export const shellWord = (s: string): string => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", `'\\''`)}'`);

export const storeFlag = (f: HintFlags): string => (f.store !== undefined ? ` --store ${shellWord(f.store)}` : "");

/**
 * The command that continues a run (`resume`; `retry` for a cancelled one): the flags known here
 * filled in, placeholders for the rest.
 */
export function resumeCommand(runId: string, f: HintFlags, sub: "resume" | "retry" = "resume"): string {
  const flag = (name: keyof HintFlags, placeholder?: string) => (f[name] !== undefined ? ` --${name} ${shellWord(f[name]!)}` : placeholder ? ` --${name} ${placeholder}` : "");
  return `forge-ts runs ${sub} ${shellWord(runId)}${flag("workflow", "<module>")}${flag("backend", "<name>")}${flag("model", "<name>")}${flag("base-url")}${flag("mode")}${flag("think")}${storeFlag(f)}`;
}
