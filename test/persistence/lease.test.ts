import { describe, expect, it } from "vitest";
import { RunLockLostError, StoreError } from "../../src/core/errors.js";
import { Lease, newHolderId, type LeaseOps } from "../../src/persistence/lease.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function lease(ops: Partial<LeaseOps>, options: { leaseMs?: number; autoRenew?: boolean } = {}) {
  const calls = { renew: 0, release: 0 };
  const l = new Lease("r1", 3, newHolderId(), {
    leaseMs: options.leaseMs ?? 150,
    location: "test",
    sentAt: performance.now(),
    autoRenew: options.autoRenew,
    ops: {
      renew: async () => (calls.renew++, ops.renew?.()),
      release: async () => void (calls.release++, await ops.release?.()),
    },
  });
  return { lease: l, calls };
}

describe("Lease", () => {
  it("renews in the background while held and stays ours; release stops renewing and releases once", async () => {
    const { lease: l, calls } = lease({});
    await sleep(400);
    expect(calls.renew).toBeGreaterThanOrEqual(4);
    expect(() => l.assertHeld()).not.toThrow();
    await l.release();
    await l.release();
    const renewed = calls.renew;
    await sleep(150);
    expect(calls.renew).toBe(renewed);
    expect(calls.release).toBe(1);
    expect(() => l.assertHeld()).toThrow(RunLockLostError);
  });

  it("a renewal refused because a newer holder exists loses the lease at once: onLost once, assertHeld throws, release does not touch the new holder's", async () => {
    const refused = new RunLockLostError("r1", "test", 3, "a newer holder took the lease over");
    const { lease: l, calls } = lease({ renew: () => Promise.reject(refused) });
    const lost: StoreError[] = [];
    l.onLost((e) => lost.push(e));
    await sleep(120);
    expect(lost).toEqual([refused]);
    expect(() => l.assertHeld()).toThrow(refused);
    l.onLost((e) => lost.push(e)); // a late subscriber hears it at once
    expect(lost).toHaveLength(2);
    await l.release();
    expect(calls.release).toBe(0);
  });

  it("a store that cannot be reached is retried until the lease would have run out by this process's clock, then the lease is lost", async () => {
    const { lease: l } = lease({ renew: () => Promise.reject(new Error("ECONNREFUSED")) });
    const lost: StoreError[] = [];
    l.onLost((e) => lost.push(e));
    await sleep(80);
    expect(lost).toEqual([]);
    expect(() => l.assertHeld()).not.toThrow();
    await sleep(200);
    expect(lost).toHaveLength(1);
    expect(lost[0]).toMatchObject({ code: "FORGE_LOCK_LOST", fence: 3 });
    expect(lost[0]!.message).toMatch(/could not renew within the 150 ms lease: ECONNREFUSED/);
  });

  it("a holder that was not renewed for a whole lease (paused) finds out before acting: assertHeld throws and onLost fires", async () => {
    const { lease: l } = lease({}, { autoRenew: false });
    const lost: StoreError[] = [];
    l.onLost((e) => lost.push(e));
    expect(() => l.assertHeld()).not.toThrow();
    await sleep(170);
    expect(() => l.assertHeld()).toThrow(/not renewed for \d+ ms, past the 150 ms lease/);
    expect(lost).toHaveLength(1);
  });

  it("holder ids name the host and process and differ per lease", () => {
    const a = newHolderId();
    expect(a).toContain(`/${process.pid}/`);
    expect(newHolderId()).not.toBe(a);
  });
});
