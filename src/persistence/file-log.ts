/**
 * The file store's log I/O: appending a line durably, cutting a line torn by a crash, reading
 * the end of a log without reading all of it; every failure a StoreError naming the run and file.
 */
import { constants } from "node:fs";
import { open, readFile, type FileHandle } from "node:fs/promises";
import path from "node:path";
import { StoreError } from "../core/errors.js";

/** The run's commit log in its directory. */
export const LOG = "log.jsonl";

/** Append one line and fsync; a new log's directory entry is fsynced too. */
export async function appendLine(runId: string, dir: string, line: string, options: { onlyIfExists?: boolean } = {}): Promise<void> {
  const file = path.join(dir, LOG);
  let created = false;
  await io(runId, file, async () => {
    let handle: FileHandle;
    try {
      handle = await open(file, constants.O_RDWR | constants.O_APPEND | (options.onlyIfExists ? 0 : constants.O_CREAT));
    } catch (error) {
      if (options.onlyIfExists && (error as NodeJS.ErrnoException).code === "ENOENT") return;
      throw error;
    }
    try {
      created = (await dropTornTail(handle)) === 0;
      await handle.writeFile(line + "\n");
      await handle.sync();
    } finally {
      await handle.close();
    }
  });
  if (created) await syncDir(runId, dir);
}

/**
 * A log that does not end in a newline ends in a line torn by a crash: an append that never
 * completed (so never acknowledged). Cut it off before appending, or the next entry would be
 * glued to it and the log would read as corrupt. Returns the size left.
 */
export async function dropTornTail(handle: FileHandle): Promise<number> {
  const { size } = await handle.stat();
  if (size === 0) return 0;
  const last = Buffer.alloc(1);
  await handle.read(last, 0, 1, size - 1);
  if (last[0] === 0x0a) return size;
  // Find the last newline, reading backwards a block at a time.
  const block = Buffer.alloc(64 * 1024);
  for (let end = size; end > 0; ) {
    const start = Math.max(0, end - block.length);
    const { bytesRead } = await handle.read(block, 0, end - start, start);
    const at = block.subarray(0, bytesRead).lastIndexOf(0x0a);
    if (at >= 0) {
      await handle.truncate(start + at + 1);
      return start + at + 1;
    }
    end = start;
  }
  await handle.truncate(0);
  return 0;
}

/** Complete lines of a log; `first`: the line number of `lines[0]` (1-based), when known. */
export interface LogLines {
  lines: string[];
  first: number | undefined;
}

/**
 * Complete lines from the end of the log: at least one commit line when the log has one (a
 * commit can be large, so the window doubles until it holds one). `first` is 1 when the window
 * starts the log; otherwise the lines' numbers are unknown (counting them means reading it all).
 */
export async function readTail(runId: string, file: string): Promise<LogLines> {
  let handle: FileHandle;
  try {
    handle = await open(file, "r");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { lines: [], first: 1 };
    throw new StoreError(`cannot read ${file} of run ${runId}: ${(error as Error).message}`, runId, file, { cause: error });
  }
  try {
    const { size } = await handle.stat();
    for (let window = 64 * 1024; ; window *= 2) {
      const start = Math.max(0, size - window);
      const buffer = Buffer.alloc(size - start);
      await handle.read(buffer, 0, buffer.length, start);
      const lines = buffer.toString("utf8").split("\n");
      lines.pop(); // "" after the last newline, or a torn line
      if (start > 0) lines.shift(); // cut mid-line
      if (lines.some((line) => line.includes('"seq"')) || start === 0) return { lines, first: start === 0 ? 1 : undefined };
    }
  } finally {
    await handle.close();
  }
}

export async function syncDir(runId: string, dir: string): Promise<void> {
  await io(runId, dir, async () => {
    const handle = await open(dir, "r");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  });
}

/** A log's complete lines: the last one, without its newline, was torn by a crash and is left out. */
export function completeLines(text: string): LogLines {
  const lines = text.split("\n");
  lines.pop();
  return { lines, first: 1 };
}

export async function readIfExists(runId: string, file: string): Promise<string | undefined> {
  try {
    return await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new StoreError(`cannot read ${file} of run ${runId}: ${(error as Error).message}`, runId, file, { cause: error });
  }
}

/** A file operation whose failure (permission, disk full, ...) becomes a StoreError naming the run and the file. */
export async function io<T>(runId: string, file: string, op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (error) {
    if (error instanceof StoreError) throw error;
    throw new StoreError(`run store I/O failed for run ${runId} at ${file}: ${(error as Error).message}`, runId, file, { cause: error });
  }
}
