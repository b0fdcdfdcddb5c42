/**
 * The session scripts on their own, against a real redis-server (no worker, no runner):
 * numbering under concurrent producers, admission, parking and release in every order.
 */
import fc from "fast-check";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { redisOptions } from "../../src/queue/redis.js";
import { sessionKeys } from "../../src/queue/session-scripts.js";
import { SessionTurns } from "../../src/queue/session-turns.js";
import { startRedis, type TestRedis } from "../../eval/bench/redis-server.js";

let redis: TestRedis;
let clients: Redis[];
let turns: SessionTurns[];
let session = 0;
const fresh = () => `s${session++}`;
const run = (runId: string) => ({ runId, workflow: "notes" });

beforeAll(async () => {
  redis = await startRedis();
  clients = [new Redis(redisOptions(redis.url)), new Redis(redisOptions(redis.url)), new Redis(redisOptions(redis.url))];
  turns = clients.map((c) => new SessionTurns(c));
}, 120_000);

afterAll(async () => {
  for (const c of clients ?? []) c.disconnect();
  await redis?.stop();
});

describe("session scripts", () => {
  it("property: concurrent registrations from several connections give each run one number, 1..n without gaps", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.nat(2), fc.nat(5)), { minLength: 1, maxLength: 30 }), async (calls) => {
        const s = fresh();
        // The same run id may come from several producers at once.
        const numbers = await Promise.all(calls.map(([producer, r]) => turns[producer]!.register(s, run(`r${r}`))));
        const byRun = new Map<string, Set<number>>();
        calls.forEach(([, r], i) => byRun.set(`r${r}`, (byRun.get(`r${r}`) ?? new Set()).add(numbers[i]!)));
        for (const set of byRun.values()) expect(set.size).toBe(1);
        expect([...byRun.values()].map((set) => [...set][0]!).sort((a, b) => a - b)).toEqual(Array.from({ length: byRun.size }, (_, i) => i + 1));
      }),
      { numRuns: 100 },
    );
  });

  it("admits turn 1, parks turn 2 until turn 1 is released, which hands back the parked job", async () => {
    const [t] = turns as [SessionTurns];
    const s = fresh();
    expect(await t.admit(s, run("a"), "fail")).toEqual({ verdict: "run", turn: 1 });
    expect(await t.admit(s, run("b"), "fail")).toEqual({ verdict: "wait", turn: 2, next: 1, blocker: run("a") });
    expect(await t.admitted(s, 2)).toBe(false);
    expect(await t.release(s, run("a"), { kind: "done" })).toEqual({ turn: 1, next: 2, parked: run("b") });
    expect(await t.admitted(s, 2)).toBe(true);
    expect(await t.admit(s, run("b"), "fail")).toEqual({ verdict: "run", turn: 2 });
    // Releasing again changes nothing.
    expect(await t.release(s, run("a"), { kind: "failed" })).toEqual({ turn: 1, next: 2, parked: undefined });
    expect(await t.admit(s, run("b"), "fail")).toEqual({ verdict: "run", turn: 2 });
  });

  it("a failed turn fails the next ones fast, naming the first failure, unless they continue", async () => {
    const [t] = turns as [SessionTurns];
    const s = fresh();
    for (const id of ["a", "b", "c", "d"]) await t.register(s, run(id));
    await t.release(s, run("a"), { kind: "failed" });
    const b = await t.admit(s, run("b"), "fail");
    expect(b).toEqual({ verdict: "fail", turn: 2, because: { kind: "failed", runId: "a", turn: 1 }, parked: undefined });
    await t.release(s, run("b"), { kind: "failed", root: { runId: "a", turn: 1 } });
    expect(await t.admit(s, run("c"), "fail")).toEqual({ verdict: "fail", turn: 3, because: { kind: "failed", runId: "a", turn: 1 }, parked: undefined });
    // A turn enqueued with afterFailure "continue" runs all the same.
    expect(await t.admit(s, run("d"), "continue")).toEqual({ verdict: "run", turn: 4 });
  });

  it("a turn ended before its time (cancelled while waiting) is skipped when the session gets there", async () => {
    const [t] = turns as [SessionTurns];
    const s = fresh();
    for (const id of ["a", "b", "c"]) await t.register(s, run(id));
    expect(await t.admit(s, run("b"), "fail")).toMatchObject({ verdict: "wait" });
    expect(await t.release(s, run("b"), { kind: "cancelled" })).toEqual({ turn: 2, next: 1, parked: undefined });
    expect(await t.admit(s, run("c"), "continue")).toMatchObject({ verdict: "wait", next: 1 });
    // Turn 1 ends: the session moves past the cancelled turn 2, and turn 3's parked job comes back.
    expect(await t.release(s, run("a"), { kind: "done" })).toEqual({ turn: 1, next: 3, parked: run("c") });
    expect(await t.admit(s, run("c"), "fail")).toEqual({ verdict: "fail", turn: 3, because: { kind: "cancelled", runId: "b", turn: 2 }, parked: undefined });
  });

  it("a session's keys expire when left alone, and keep only what a later turn needs (the last outcome, and failures)", async () => {
    const [t] = turns as [SessionTurns];
    const s = fresh();
    for (const id of ["a", "b", "c"]) {
      await t.register(s, run(id));
      await t.release(s, run(id), { kind: "done" });
    }
    const [state, runs, order, ended, parked] = sessionKeys(s) as [string, string, string, string, string];
    expect(await clients[0]!.hgetall(state)).toEqual({ seq: "3", next: "4" });
    expect(await clients[0]!.hgetall(ended)).toEqual({ "3": "done" });
    expect(await clients[0]!.hlen(order)).toBe(0);
    expect(await clients[0]!.exists(parked)).toBe(0);
    expect(await clients[0]!.hlen(runs)).toBe(3); // a run enqueued again keeps its number
    expect(await clients[0]!.pttl(state)).toBeGreaterThan(6 * 86_400_000);
  });

  it("a turn failed fast has its end recorded at once, naming the turn that failed first; taken again later it is past, never run", async () => {
    const s = fresh();
    const [t] = turns;
    for (const r of ["a", "b", "c"]) await t!.register(s, run(r));
    expect(await t!.admit(s, run("a"), "fail")).toEqual({ verdict: "run", turn: 1 });
    // c comes early and is parked.
    expect(await t!.admit(s, run("c"), "fail")).toMatchObject({ verdict: "wait", turn: 3, next: 1 });
    await t!.release(s, run("a"), { kind: "failed" });
    // b fails fast: its end is recorded by the admission itself, and c, parked, is handed back to wake.
    expect(await t!.admit(s, run("b"), "fail")).toEqual({ verdict: "fail", turn: 2, because: { kind: "failed", runId: "a", turn: 1 }, parked: run("c") });
    // A later release of b (its worker, or a look at its failed job) cannot rename the root.
    await t!.release(s, run("b"), { kind: "failed" });
    expect(await t!.admit(s, run("c"), "fail")).toEqual({ verdict: "fail", turn: 3, because: { kind: "failed", runId: "a", turn: 1 }, parked: undefined });
    // b's job taken again by a worker that was paused with it: past, with how it ended.
    expect(await t!.admit(s, run("b"), "fail")).toEqual({ verdict: "past", turn: 2, outcome: { kind: "failed", runId: "a", turn: 1 } });
    expect(await t!.admit(s, run("c"), "fail")).toEqual({ verdict: "past", turn: 3, outcome: { kind: "failed", runId: "a", turn: 1 } });
  });
});
