/**
 * The file store's leases: `lease.<n>.json` in the run's directory, the highest number being the
 * lease. A new number is created with link(2), which fails when it exists: of two takers one wins.
 */
import { readdirSync } from "node:fs";
import { link, rename, readdir, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { RunLockLostError, StoreError } from "../core/errors.js";
import { io } from "./file-log.js";

export const LEASE = /^lease\.(\d+)\.json$/;
export const leaseFile = (fence: number) => `lease.${fence}.json`;

/** Create lease file `fence` whole, or report that another taker created it first. */
export async function createLease(runId: string, dir: string, fence: number, content: { holder: string; expiresAt: number }): Promise<boolean> {
  const temp = path.join(dir, `${leaseFile(fence)}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`);
  await io(runId, temp, () => writeFile(temp, JSON.stringify(content)));
  try {
    await link(temp, path.join(dir, leaseFile(fence)));
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw new StoreError(`cannot take the lease of run ${runId} (${dir}): ${(error as Error).message}`, runId, dir, { cause: error });
  } finally {
    await unlink(temp).catch(() => undefined);
  }
}

/**
 * The highest lease number in the run's directory (0: never leased). Read synchronously: it is
 * a few cached directory entries, and a trip through the thread pool would cost more than the
 * read itself on every commit.
 */
export function newestFence(runId: string, dir: string): number {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return 0;
    throw new StoreError(`cannot read the leases of run ${runId} (${dir}): ${(error as Error).message}`, runId, dir, { cause: error });
  }
  return names.reduce((max, name) => Math.max(max, Number(LEASE.exec(name)?.[1] ?? 0)), 0);
}

/** RunLockLostError once a lease newer than `fence` exists: any higher number (a takeover removes the files below its own). */
export function assertNoNewerLease(runId: string, dir: string, fence: number): void {
  const newest = newestFence(runId, dir);
  if (newest > fence) throw new RunLockLostError(runId, path.join(dir, leaseFile(newest)), fence, `a newer holder (lease ${newest}) took the lease over`);
  if (newest < fence) throw new RunLockLostError(runId, dir, fence, "the run has no such lease");
}

export async function removeOlderLeases(runId: string, dir: string, fence: number): Promise<void> {
  const names = await io(runId, dir, () => readdir(dir));
  for (const name of names) {
    const n = Number(LEASE.exec(name)?.[1]);
    if (n < fence) await unlink(path.join(dir, name)).catch(() => undefined);
  }
}

export async function writeAtomically(runId: string, file: string, text: string): Promise<void> {
  const temp = `${file}.${process.pid}.tmp`;
  await io(runId, temp, () => writeFile(temp, text));
  await io(runId, file, () => rename(temp, file));
}
