/**
 * The default run store: plain files, no dependencies. Layout under the store directory:
 *
 *   runs/<runId>/checkpoint.json   latest checkpoint, replaced atomically
 *   runs/<runId>/events.jsonl      append-only event log, one JSON object a line
 *   runs/<runId>/lock              pid of the process driving the run
 *
 * A checkpoint is written to a temporary file, fsynced, renamed over the old one and the
 * directory fsynced, so a kill -9 at any byte leaves the old checkpoint or the new one, whole.
 * A log line torn by a kill is the last line, without its newline: readers leave it out.
 */
import { constants } from "node:fs";
import { mkdir, open, readdir, readFile, rename, rm, unlink, type FileHandle } from "node:fs/promises";
import path from "node:path";
import { InvalidArgumentError, RunLockedError, StoreError } from "../core/errors.js";
import { isPlainObject } from "../core/messages.js";
import { assertRunId, checkedRunInfo, isProcessAlive as isAlive, isRunId, SessionViews, byStart, type Checkpoint, type RunEvent, type RunInfo, type RunLock, type RunStore } from "./run-store.js";

const CHECKPOINT = "checkpoint.json";
const EVENTS = "events.jsonl";
const LOCK = "lock";

/** Locks this process holds, by lock file path (a second runner here is refused like another process). */
const held = new Set<string>();

/**
 * @example
 * const store = new FileRunStore({ dir: "./.forge" });
 * const runner = new WorkflowRunner({ client, contextManager, store });
 */
export class FileRunStore extends SessionViews implements RunStore {
  readonly dir: string;

  /** `dir`: the store directory, created on first write (default ./.forge). */
  constructor(options: { dir?: string } = {}) {
    super();
    const dir: unknown = options?.dir ?? ".forge";
    if (typeof dir !== "string" || dir.length === 0) throw new InvalidArgumentError("dir", "expected a directory path");
    this.dir = path.resolve(dir);
  }

  async putCheckpoint(checkpoint: Checkpoint): Promise<void> {
    const dir = await this.#runDir(checkpoint.runId, true);
    const file = path.join(dir, CHECKPOINT);
    const temp = path.join(dir, `${CHECKPOINT}.${process.pid}.tmp`);
    await io(checkpoint.runId, temp, async () => {
      const handle = await open(temp, "w");
      try {
        await handle.writeFile(JSON.stringify(checkpoint));
        await handle.sync();
      } finally {
        await handle.close();
      }
    });
    await io(checkpoint.runId, file, () => rename(temp, file));
    await io(checkpoint.runId, dir, () => syncDir(dir));
  }

  async appendEvents(runId: string, events: readonly RunEvent[]): Promise<void> {
    if (events.length === 0) return;
    const file = path.join(await this.#runDir(runId, true), EVENTS);
    const text = events.map((e) => JSON.stringify(e)).join("\n") + "\n";
    await io(runId, file, async () => {
      const handle = await open(file, constants.O_RDWR | constants.O_APPEND | constants.O_CREAT);
      try {
        await dropTornTail(handle);
        await handle.writeFile(text);
        await handle.sync();
      } finally {
        await handle.close();
      }
    });
  }

  async latest(runId: string): Promise<Checkpoint | undefined> {
    const file = path.join(await this.#runDir(runId, false), CHECKPOINT);
    const text = await readIfExists(runId, file);
    if (text === undefined) return undefined;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw new StoreError(`checkpoint of run ${runId} is not JSON (${file}): ${(error as Error).message}`, runId, file, { cause: error });
    }
    return checkedCheckpoint(parsed, runId, file);
  }

  async events(runId: string): Promise<RunEvent[]> {
    const file = path.join(await this.#runDir(runId, false), EVENTS);
    const text = await readIfExists(runId, file);
    if (text === undefined) return [];
    const lines = text.split("\n");
    // The last element is "" after a complete log; anything else there is a line torn by a crash.
    lines.pop();
    return lines.map((line, i) => {
      try {
        return JSON.parse(line) as RunEvent;
      } catch (error) {
        throw new StoreError(`event log of run ${runId} has a corrupt line ${i + 1} (${file})`, runId, file, { cause: error });
      }
    });
  }

  async listRuns(filter: { sessionId?: string } = {}): Promise<RunInfo[]> {
    const root = path.join(this.dir, "runs");
    let ids: string[];
    try {
      ids = await readdir(root);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw new StoreError(`cannot list runs in ${root}: ${(error as Error).message}`, undefined, root, { cause: error });
    }
    const runs: RunInfo[] = [];
    for (const id of ids.filter(isRunId)) {
      const checkpoint = await this.latest(id);
      if (!checkpoint) continue; // a run killed before its first checkpoint
      if (filter.sessionId !== undefined && checkpoint.sessionId !== filter.sessionId) continue;
      const { snapshot: _snapshot, ...info } = checkpoint;
      runs.push(info);
    }
    return runs.sort(byStart);
  }

  async lock(runId: string): Promise<RunLock> {
    const file = path.join(await this.#runDir(runId, true), LOCK);
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const handle = await open(file, "wx");
        try {
          await handle.writeFile(String(process.pid));
        } finally {
          await handle.close();
        }
        held.add(file);
        return { release: () => release(runId, file) };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") {
          throw new StoreError(`cannot lock run ${runId} (${file}): ${(error as Error).message}`, runId, file, { cause: error });
        }
      }
      const holder = Number((await readIfExists(runId, file))?.trim());
      const ours = holder === process.pid && held.has(file);
      if (ours || (Number.isSafeInteger(holder) && holder > 0 && holder !== process.pid && isAlive(holder))) {
        throw new RunLockedError(runId, file, holder);
      }
      // Stale: its process is gone (killed mid-run), or the file is unreadable junk.
      await io(runId, file, () => unlink(file).catch((e: NodeJS.ErrnoException) => (e.code === "ENOENT" ? undefined : Promise.reject(e))));
    }
    throw new StoreError(`cannot lock run ${runId}: another process keeps taking the lock (${file})`, runId, file);
  }

  async deleteRun(runId: string): Promise<void> {
    const dir = await this.#runDir(runId, false);
    const lockFile = path.join(dir, LOCK);
    const holder = Number((await readIfExists(runId, lockFile))?.trim());
    if ((holder === process.pid && held.has(lockFile)) || (holder !== process.pid && holder > 0 && isAlive(holder))) {
      throw new RunLockedError(runId, lockFile, holder);
    }
    await io(runId, dir, () => rm(dir, { recursive: true, force: true }));
  }

  async #runDir(runId: string, create: boolean): Promise<string> {
    // Run ids become directory names: nothing that could climb out of the store.
    assertRunId(runId);
    const dir = path.join(this.dir, "runs", runId);
    if (create) await io(runId, dir, () => mkdir(dir, { recursive: true }));
    return dir;
  }
}

async function release(runId: string, file: string): Promise<void> {
  if (!held.delete(file)) return;
  await io(runId, file, () => unlink(file).catch((e: NodeJS.ErrnoException) => (e.code === "ENOENT" ? undefined : Promise.reject(e))));
}

/**
 * A log that does not end in a newline ends in a line torn by a crash: an append that never
 * completed (so never acknowledged). Cut it off before appending, or the next entry would be
 * glued to it and the log would read as corrupt.
 */
async function dropTornTail(handle: FileHandle): Promise<void> {
  const { size } = await handle.stat();
  if (size === 0) return;
  const last = Buffer.alloc(1);
  await handle.read(last, 0, 1, size - 1);
  if (last[0] === 0x0a) return;
  // Find the last newline, reading backwards a block at a time.
  const block = Buffer.alloc(64 * 1024);
  for (let end = size; end > 0; ) {
    const start = Math.max(0, end - block.length);
    const { bytesRead } = await handle.read(block, 0, end - start, start);
    const at = block.subarray(0, bytesRead).lastIndexOf(0x0a);
    if (at >= 0) {
      await handle.truncate(start + at + 1);
      return;
    }
    end = start;
  }
  await handle.truncate(0);
}

async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function readIfExists(runId: string, file: string): Promise<string | undefined> {
  try {
    return await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new StoreError(`cannot read ${file} of run ${runId}: ${(error as Error).message}`, runId, file, { cause: error });
  }
}

/** A file operation whose failure (permission, disk full, ...) becomes a StoreError naming the run and the file. */
async function io<T>(runId: string, file: string, op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (error) {
    if (error instanceof StoreError) throw error;
    throw new StoreError(`run store I/O failed for run ${runId} at ${file}: ${(error as Error).message}`, runId, file, { cause: error });
  }
}

/** The envelope of a checkpoint read back (its snapshot is checked by the resume path). */
function checkedCheckpoint(value: unknown, runId: string, file: string): Checkpoint {
  const bad = (what: string) => new StoreError(`checkpoint of run ${runId} is malformed (${file}): ${what}`, runId, file);
  if (!isPlainObject(value)) throw bad("not an object");
  if (value.runId !== runId) throw bad(`it names run ${JSON.stringify(value.runId)}`);
  const { seq, workflow, sessionId, state, status, createdAt, savedAt } = value;
  const info = checkedRunInfo({ seq, workflow, sessionId, state, status, createdAt, savedAt }, runId, file);
  if (!isPlainObject(value.snapshot)) throw bad("snapshot is not an object");
  return { ...info, snapshot: value.snapshot as unknown as Checkpoint["snapshot"] };
}
