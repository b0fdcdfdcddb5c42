import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { RunLockLostError, StoreError } from "../../src/core/errors.js";
import { Lease, newHolderId, type LeaseOps } from "../../src/persistence/lease.js";

// The lease keeps its own time with performance.now() and renews on setInterval: both are faked,
// so a lease period passes when the test says so, however loaded the machine is.
beforeEach(() => {
  vi.useFakeTimers({ toFake: ["setInterval", "clearInterval", "performance"] });
});
afterEach(() => {
  vi.useRealTimers();
});

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
    await vi.advanceTimersByTimeAsync(400);
    expect(calls.renew).toBe(8); // every third of the 150 ms lease
    expect(() => l.assertHeld()).not.toThrow();
    await l.release();
    await l.release();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(calls.renew).toBe(8);
    expect(calls.release).toBe(1);
    expect(() => l.assertHeld()).toThrow(RunLockLostError);
  });

  it("a renewal refused because a newer holder exists loses the lease at once: onLost once, assertHeld throws, release does not touch the new holder's", async () => {
    const refused = new RunLockLostError("r1", "test", 3, "a newer holder took the lease over");
    const { lease: l, calls } = lease({ renew: () => Promise.reject(refused) });
    const lost: StoreError[] = [];
    l.onLost((e) => lost.push(e));
    await vi.advanceTimersByTimeAsync(50); // the first renewal
    expect(calls.renew).toBe(1);
    expect(lost).toEqual([refused]);
    expect(() => l.assertHeld()).toThrow(refused);
    await vi.advanceTimersByTimeAsync(500);
    expect(calls.renew).toBe(1); // a lost lease is not renewed again
    l.onLost((e) => lost.push(e)); // a late subscriber hears it at once
    expect(lost).toHaveLength(2);
    await l.release();
    expect(calls.release).toBe(0);
  });

  it("a store that cannot be reached is retried until the lease would have run out by this process's clock, then the lease is lost", async () => {
    const { lease: l, calls } = lease({ renew: () => Promise.reject(new Error("ECONNREFUSED")) });
    const lost: StoreError[] = [];
    l.onLost((e) => lost.push(e));
    await vi.advanceTimersByTimeAsync(149);
    expect(calls.renew).toBe(2); // at 50 and 100 ms, both failed: retried, not lost
    expect(lost).toEqual([]);
    expect(() => l.assertHeld()).not.toThrow();
    await vi.advanceTimersByTimeAsync(1); // the renewal at 150 ms fails with the lease run out
    expect(calls.renew).toBe(3);
    expect(lost).toHaveLength(1);
    expect(lost[0]).toMatchObject({ code: "FORGE_LOCK_LOST", fence: 3 });
    expect(lost[0]!.message).toMatch(/could not renew within the 150 ms lease: ECONNREFUSED/);
  });

  it("a holder that was not renewed for a whole lease (paused) finds out before acting: assertHeld throws and onLost fires", async () => {
    const { lease: l, calls } = lease({}, { autoRenew: false });
    const lost: StoreError[] = [];
    l.onLost((e) => lost.push(e));
    await vi.advanceTimersByTimeAsync(149);
    expect(() => l.assertHeld()).not.toThrow();
    expect(calls.renew).toBe(0);
    await vi.advanceTimersByTimeAsync(21);
    expect(() => l.assertHeld()).toThrow(/not renewed for 170 ms, past the 150 ms lease/);
    expect(lost).toHaveLength(1);
  });

  it("holder ids name the host and process and differ per lease", () => {
    const a = newHolderId();
    expect(a).toContain(`/${process.pid}/`);
    expect(newHolderId()).not.toBe(a);
  });
});
