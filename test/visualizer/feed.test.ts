import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { statusOfState } from "../../src/persistence/run-store.js";
import { Feed } from "../../visualizer/feed.js";
import type { WireEvent } from "../../visualizer/protocol.js";

const base = (runId: string, at: number) => ({ runId, sessionId: "x:0", rootId: "x:0", at });
const micro = (runId: string, at: number, value: unknown = "inferring"): WireEvent => ({ ...base(runId, at), type: "@xstate.microstep", event: { type: "e" }, value, transitions: [] });
const snap = (runId: string, at: number, status: "active" | "done" = "active", iteration = 0): WireEvent => ({
  ...base(runId, at),
  type: "@xstate.snapshot",
  event: { type: "e" },
  snapshot: { value: status === "done" ? "done" : "inferring", status, context: { run: { workflow: "wf", startedAt: 5 }, iteration } },
});

describe("Feed", () => {
  it("numbers each run's events 1, 2, 3 and hands out what came after a given id", () => {
    const feed = new Feed();
    feed.ingest([micro("a", 1), micro("b", 1), micro("a", 2), snap("a", 3)]);
    expect(feed.since("a").events.map((e) => e.id)).toEqual([1, 2, 3]);
    expect(feed.since("b").events.map((e) => e.id)).toEqual([1]);
    expect(feed.since("a", 2)).toEqual({ lost: 0, events: [expect.objectContaining({ id: 3, type: "@xstate.snapshot" })] });
    expect(feed.since("nope", 0)).toEqual({ lost: 0, events: [] });
  });

  it("delivers new events of a run to its subscribers only, until they leave", () => {
    const feed = new Feed();
    const seen: number[] = [];
    const off = feed.subscribe("a", (e) => seen.push(e.id));
    feed.ingest([micro("a", 1), micro("b", 1), micro("a", 2)]);
    off();
    feed.ingest([micro("a", 3)]);
    expect(seen).toEqual([1, 2]);
  });

  it("keeps a run's buffer bounded; a resume from before the cut learns how much it lost and gets the last dropped snapshot", () => {
    const feed = new Feed({ maxEventsPerRun: 5 });
    const events: WireEvent[] = [];
    for (let i = 1; i <= 12; i++) events.push(i === 4 ? snap("a", i, "active", 4) : micro("a", i));
    feed.ingest(events);
    const slice = feed.since("a", 0);
    expect(slice.lost).toBe(7);
    // The snapshot (id 4) was dropped, but comes first so the page's panels are right.
    expect(slice.events.map((e) => e.id)).toEqual([4, 8, 9, 10, 11, 12]);
    expect(feed.since("a", 9)).toEqual({ lost: 0, events: [expect.objectContaining({ id: 10 }), expect.objectContaining({ id: 11 }), expect.objectContaining({ id: 12 })] });
    expect(feed.since("a", 5).lost).toBe(2);
  });

  it("says a live run's status in the store's words: cancelled, failed, waiting", () => {
    const feed = new Feed();
    const at = (runId: string, value: string, status: "active" | "done" | "error"): WireEvent => ({ ...base(runId, 1), type: "@xstate.snapshot", event: { type: "e" }, snapshot: { value, status, context: {} } });
    feed.ingest([at("c", "cancelled", "done"), at("f", "failed", "done"), at("d", "done", "done"), at("w", "awaitingHuman", "active"), at("i", "inferring", "active"), at("e", "inferring", "error")]);
    const statuses = Object.fromEntries(feed.runs().map((r) => [r.runId, [r.status, r.live]]));
    expect(statuses).toEqual({ c: ["cancelled", false], f: ["failed", false], d: ["done", false], w: ["waiting", true], i: ["active", true], e: ["failed", false] });
  });

  it("bounds a run's bytes too, always keeping the newest event", () => {
    const feed = new Feed({ maxBytesPerRun: 10 });
    feed.ingest([micro("a", 1), micro("a", 2)]);
    expect(feed.since("a", 0).events.map((e) => e.id)).toEqual([2]);
  });

  it("summarizes each run from its newest events, most recently updated first", () => {
    const feed = new Feed();
    feed.ingest([micro("a", 10, { compacting: "checking" }), snap("b", 20, "active", 3), micro("b", 21, { executingTools: "running" })]);
    feed.ingest([snap("a", 30, "done", 5)]);
    const [a, b] = feed.runs();
    expect(a).toMatchObject({ runId: "a", workflow: "wf", state: "done", status: "done", live: false, iteration: 5, startedAt: 5, updatedAt: 30, events: 2 });
    expect(b).toMatchObject({ runId: "b", state: "executingTools.running", status: "active", live: true, iteration: 3, events: 2 });
  });

  it("names a live run's status as the store does (statusOfState); an actor that threw has failed", () => {
    const feed = new Feed();
    const at = (runId: string, value: string, status: "active" | "done" | "error" | "stopped"): WireEvent => ({
      ...base(runId, 1),
      type: "@xstate.snapshot",
      event: { type: "e" },
      snapshot: { value, status, context: {} },
    });
    feed.ingest([at("waits", "awaitingHuman", "active"), at("parked", "awaitingHuman", "stopped"), at("threw", "inferring", "error"), at("ended", "failed", "done")]);
    const status = Object.fromEntries(feed.runs().map((r) => [r.runId, r.status]));
    expect(status).toEqual({
      waits: statusOfState("awaitingHuman", false),
      parked: statusOfState("awaitingHuman", false),
      threw: "failed",
      ended: statusOfState("failed", true),
    });
    expect(status.waits).toBe("waiting");
  });

  it("drops the least recently updated finished runs beyond maxRuns, never a live or watched one", () => {
    const feed = new Feed({ maxRuns: 2 });
    feed.ingest([snap("old", 1, "done")]);
    feed.ingest([snap("watched", 2, "done")]);
    const off = feed.subscribe("watched", () => undefined);
    feed.ingest([snap("live", 3, "active")]);
    expect(feed.has("old")).toBe(false);
    expect(feed.has("watched") && feed.has("live")).toBe(true);
    off();
    feed.ingest([snap("new", 4, "done")]);
    expect(feed.runs().map((r) => r.runId).sort()).toEqual(["live", "new"]);
  });

  it("tells its change listeners after each batch", () => {
    const feed = new Feed();
    let changes = 0;
    const off = feed.onChange(() => changes++);
    feed.ingest([micro("a", 1), micro("a", 2)]);
    feed.ingest([]);
    off();
    feed.ingest([micro("a", 3)]);
    expect(changes).toBe(1);
  });

  it("property: a resume from any id gets every kept event after it, in order, and counts exactly what it lost", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 60 }), fc.integer({ min: 1, max: 20 }), fc.nat(70), (total, max, resumeFrom) => {
        const feed = new Feed({ maxEventsPerRun: max });
        for (let i = 1; i <= total; i++) feed.ingest([micro("r", i)]);
        const after = Math.min(resumeFrom, total);
        const { lost, events } = feed.since("r", after);
        const ids = events.map((e) => e.id);
        expect(ids).toEqual([...ids].sort((x, y) => x - y));
        expect(ids.every((id) => id > after)).toBe(true);
        // Nothing goes missing without being counted.
        expect(lost + ids.length).toBe(total - after);
      }),
    );
  });
});
