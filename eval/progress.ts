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

/** The bar line for `done` of `total` runs (exported for tests). */
export function progressLine(done: number, total: number, passed: number, elapsedMs: number, width = 24): string {
  const frac = total === 0 ? 1 : done / total;
  const filled = Math.round(frac * width);
  const rate = done === 0 ? 0 : passed / done;
  const eta = done === 0 ? Number.NaN : (elapsedMs / done) * (total - done);
  return `[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${done}/${total}  pass ${Math.round(rate * 100)}%  ETA ${formatEta(eta)}`;
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
