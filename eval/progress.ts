/**
 * Run progress: a redrawn bar on a TTY (runs done, pass rate so far, ETA), one plain line per
 * run otherwise (CI logs, pipes).
 */
import type { RunRecord } from "./run-record.js";

export interface Progress {
  tick(record: RunRecord): void;
  done(): void;
}

export interface ProgressOptions {
  total: number;
  out?: NodeJS.WritableStream & { isTTY?: boolean };
  /** Defaults to `out.isTTY`. */
  tty?: boolean;
  now?: () => number;
}

function formatEta(ms: number): string {
  if (!Number.isFinite(ms)) return "?";
  const s = Math.round(ms / 1000);
  return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s` : `${s}s`;
}

/** "[#####-----] 5/10": the bar both progress kinds draw. */
function bar(done: number, total: number, width: number): string {
  const filled = Math.round((total === 0 ? 1 : Math.min(1, done / total)) * width);
  return `[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${done}/${total}`;
}

const eta = (done: number, total: number, elapsedMs: number) => formatEta(done === 0 ? Number.NaN : (elapsedMs / done) * (total - done));

/** The bar line for `done` of `total` runs (exported for tests). */
export function progressLine(done: number, total: number, passed: number, elapsedMs: number, width = 24): string {
  const rate = done === 0 ? 0 : passed / done;
  return `${bar(done, total, width)}  pass ${Math.round(rate * 100)}%  ETA ${eta(done, total, elapsedMs)}`;
}

export interface PhaseProgress {
  /** `done` units of the phase so far. */
  update(done: number): void;
  /** The phase is over: on a TTY the bar is finished, otherwise its one line is printed. */
  done(): void;
}

/**
 * A long phase of a bench (kill -9 runs, chaos runs settling): a redrawn bar on a TTY, one line
 * when it ends otherwise, so a CI log gets a line per phase and not one per unit.
 *
 * @example const p = phaseProgress("durability file: kill -9 runs", 500); p.update(1); p.done();
 */
export function phaseProgress(label: string, total: number, options: Omit<ProgressOptions, "total"> = {}): PhaseProgress {
  const out = options.out ?? process.stderr;
  const tty = options.tty ?? Boolean(out.isTTY);
  const now = options.now ?? Date.now;
  const start = now();
  let last = 0;
  return {
    update(done) {
      last = done;
      if (tty) out.write(`\r${label} ${bar(done, total, 24)}  ETA ${eta(done, total, now() - start)}\x1b[K`);
    },
    done() {
      const seconds = Math.round((now() - start) / 1000);
      out.write(tty ? "\n" : `${label}: ${last}/${total} in ${seconds}s\n`);
    },
  };
}

/** "BackendError: No usable HTTP answer from ..." (clipped), or the wrong answer's error type. */
function failure(record: RunRecord): string {
  if (!record.errorType) return "";
  const message = record.errorMessage ? `: ${record.errorMessage.replaceAll("\n", " ").slice(0, 200)}` : "";
  return `${record.errorType}${message}`;
}

/**
 * @example
 * const p = createProgress({ total: 145 }); p.tick(record); p.done();
 */
export function createProgress(options: ProgressOptions): Progress {
  const out = options.out ?? process.stderr;
  const tty = options.tty ?? Boolean(out.isTTY);
  const now = options.now ?? Date.now;
  const start = now();
  let done = 0;
  let passed = 0;
  return {
    tick(record) {
      done++;
      if (record.correct) passed++;
      const line = progressLine(done, options.total, passed, now() - start);
      if (tty) {
        // A failure with an error is worth a line of its own above the bar.
        if (record.errorType) out.write(`\r\x1b[K${record.config} ${record.scenario}#${record.runIndex} FAIL ${failure(record)}\n`);
        out.write(`\r${line}\x1b[K`);
      } else {
        const verdict = record.correct ? "PASS" : `FAIL ${failure(record)}`.trimEnd();
        out.write(`[${done}/${options.total}] ${record.config} ${record.scenario}#${record.runIndex} ${verdict} it=${record.iterations} (pass ${Math.round((passed / done) * 100)}%)\n`);
      }
    },
    done() {
      if (tty) out.write("\n");
    },
  };
}
