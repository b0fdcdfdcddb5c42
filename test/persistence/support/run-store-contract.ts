/**
 * The behaviour every RunStore must have, as one suite: each store's test file calls
 * `runStoreContract(name, makeStore)` with a factory giving a fresh, empty store.
 */
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { InvalidArgumentError, RunLockedError, StoreError } from "../../../src/core/errors.js";
import { createMessage, MessageType, type Message } from "../../../src/core/messages.js";
import type { Checkpoint, RunEvent, RunStore } from "../../../src/persistence/run-store.js";
import type { PersistedRun } from "../../../src/persistence/snapshot.js";

/** A checkpoint whose snapshot carries `messages` (stores never look inside it beyond that). */
export function checkpointOf(runId: string, seq: number, extra: Partial<Checkpoint> = {}, messages: Message[] = []): Checkpoint {
  const snapshot = { status: extra.status === "done" ? "done" : "active", value: "inferring", context: { messages } } as unknown as PersistedRun;
  return { runId, seq, workflow: "wf", state: "inferring", status: "active", createdAt: 1_000 + seq, savedAt: 2_000 + seq, snapshot, ...extra };
}

const response = (i: number): RunEvent => ({ type: "response", iteration: i, response: { type: "text", content: `answer ${i}` }, usage: { inputTokens: i, outputTokens: 1 }, now: i });

/** A live process that is not this one (a lock it holds must be refused). */
async function otherLiveProcess(): Promise<{ pid: number; stop: () => void }> {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
  await new Promise<void>((resolve, reject) => {
    child.once("spawn", () => resolve());
    child.once("error", reject);
  });
  return { pid: child.pid!, stop: () => child.kill("SIGKILL") };
}

export interface ContractHooks {
  /** Write a lock held by `pid` the way this store does, as if another process had taken it. */
  plantLock(store: RunStore, runId: string, pid: number): Promise<void>;
  /** Corrupt the run's latest checkpoint in storage (truncate it mid-way). */
  corruptCheckpoint(store: RunStore, runId: string): Promise<void>;
}

export function runStoreContract(name: string, makeStore: () => Promise<RunStore> | RunStore, hooks: ContractHooks): void {
  describe(`${name}: RunStore contract`, () => {
    it("keeps the latest checkpoint of each run; unknown runs have none", async () => {
      const store = await makeStore();
      expect(await store.latest("r1")).toBeUndefined();
      await store.putCheckpoint(checkpointOf("r1", 1));
      await store.putCheckpoint(checkpointOf("r1", 2, { state: "executingTools.running" }));
      await store.putCheckpoint(checkpointOf("r2", 1));
      expect(await store.latest("r1")).toMatchObject({ runId: "r1", seq: 2, state: "executingTools.running" });
      expect((await store.latest("r2"))?.seq).toBe(1);
    });

    it("round-trips a checkpoint exactly (JSON values, session id)", async () => {
      const store = await makeStore();
      const messages = [createMessage("system", "sys", MessageType.SYSTEM_PROMPT), createMessage("user", "ünïcode ✓ \"quotes\"\n", MessageType.USER_INPUT)];
      const checkpoint = checkpointOf("r1", 1, { sessionId: "s1" }, messages);
      await store.putCheckpoint(checkpoint);
      expect(await store.latest("r1")).toEqual(checkpoint);
    });

    it("appends events in order and reads them back", async () => {
      const store = await makeStore();
      expect(await store.events("r1")).toEqual([]);
      await store.appendEvents("r1", [response(1), response(2)]);
      await store.appendEvents("r1", []);
      await store.appendEvents("r1", [{ type: "end", state: "done" }]);
      expect(await store.events("r1")).toEqual([response(1), response(2), { type: "end", state: "done" }]);
    });

    it("lists runs oldest first, filtered by session; groups sessions; a session's history is its last finished run", async () => {
      const store = await makeStore();
      const turn1 = [createMessage("user", "turn 1", MessageType.USER_INPUT)];
      const turn2 = [...turn1, createMessage("user", "turn 2", MessageType.USER_INPUT)];
      await store.putCheckpoint(checkpointOf("a", 1, { sessionId: "s", createdAt: 10, status: "done", state: "done" }, turn1));
      await store.putCheckpoint(checkpointOf("b", 1, { sessionId: "s", createdAt: 20, status: "done", state: "done" }, turn2));
      await store.putCheckpoint(checkpointOf("c", 1, { sessionId: "s", createdAt: 30 }, [...turn2, createMessage("user", "unfinished", MessageType.USER_INPUT)]));
      await store.putCheckpoint(checkpointOf("d", 1, { createdAt: 5 }));
      expect((await store.listRuns()).map((r) => r.runId)).toEqual(["d", "a", "b", "c"]);
      const listed = await store.listRuns({ sessionId: "s" });
      expect(listed.map((r) => r.runId)).toEqual(["a", "b", "c"]);
      expect(listed[0]).not.toHaveProperty("snapshot");
      const sessions = await store.listSessions();
      expect(sessions.map((s) => [s.sessionId, s.runs.map((r) => r.runId)])).toEqual([["s", ["a", "b", "c"]]]);
      expect((await store.history("s")).map((m) => m.content)).toEqual(["turn 1", "turn 2"]);
      expect(await store.history("nobody")).toEqual([]);
    });

    it("locks a run for one holder: a second lock is refused until release", async () => {
      const store = await makeStore();
      const lock = await store.lock("r1");
      const refused = await store.lock("r1").catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(RunLockedError);
      expect(refused).toMatchObject({ runId: "r1", holderPid: process.pid });
      await lock.release();
      await lock.release(); // twice is harmless
      const again = await store.lock("r1");
      await again.release();
    });

    it("refuses a run locked by another live process, and takes over a lock whose process is gone", async () => {
      const store = await makeStore();
      const other = await otherLiveProcess();
      try {
        await hooks.plantLock(store, "r1", other.pid);
        await expect(store.lock("r1")).rejects.toMatchObject({ code: "FORGE_RUN_LOCKED", holderPid: other.pid });
      } finally {
        other.stop();
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
      // The holder died (kill -9 mid-run): its lock is stale.
      const lock = await store.lock("r1");
      await lock.release();
    });

    it("deletes a run, and will not delete one that is locked", async () => {
      const store = await makeStore();
      await store.putCheckpoint(checkpointOf("r1", 1));
      await store.appendEvents("r1", [response(1)]);
      const lock = await store.lock("r1");
      await expect(store.deleteRun("r1")).rejects.toBeInstanceOf(RunLockedError);
      await lock.release();
      await store.deleteRun("r1");
      expect(await store.latest("r1")).toBeUndefined();
      expect(await store.events("r1")).toEqual([]);
      expect(await store.listRuns()).toEqual([]);
    });

    it("a corrupt checkpoint is a StoreError naming the run", async () => {
      const store = await makeStore();
      await store.putCheckpoint(checkpointOf("r1", 1));
      await hooks.corruptCheckpoint(store, "r1");
      const error = await store.latest("r1").catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreError);
      expect((error as StoreError).runId).toBe("r1");
      expect((error as StoreError).message).toContain("r1");
    });

    it("refuses run ids that cannot name a run", async () => {
      const store = await makeStore();
      for (const bad of ["", "../x", "a/b", ".hidden", "x".repeat(200)]) {
        await expect(store.putCheckpoint(checkpointOf(bad, 1))).rejects.toBeInstanceOf(InvalidArgumentError);
      }
    });
  });
}
