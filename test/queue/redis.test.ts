import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { jobIdOf, lockOptions, redactUrl, redisOptions } from "../../src/queue/redis.js";

describe("redis helpers", () => {
  it("reads a redis URL into BullMQ connection options that wait out an outage", () => {
    expect(redisOptions("redis://u:p%40ss@example.org:6380/3")).toMatchObject({ host: "example.org", port: 6380, username: "u", password: "p@ss", db: 3, maxRetriesPerRequest: null });
    expect(redisOptions("redis://127.0.0.1")).toMatchObject({ host: "127.0.0.1", port: 6379, db: 0 });
    expect(redisOptions("rediss://h").tls).toEqual({});
    expect(() => redisOptions("http://h")).toThrow(/redis:\/\/ or rediss:\/\//);
    expect(() => redisOptions("nope")).toThrow(/expected a redis:\/\/ URL/);
    expect(() => redisOptions("redis://h/x")).toThrow(/database/);
  });

  it("property: job ids from keys hold no ':' and two keys never share one", () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (a, b) => {
        expect(jobIdOf(a)).not.toContain(":");
        expect(decodeURIComponent(jobIdOf(a))).toBe(a);
        if (a !== b) expect(jobIdOf(a)).not.toBe(jobIdOf(b));
      }),
    );
  });

  it("hides a password in logged URLs", () => {
    expect(redactUrl("redis://:s3cret@h:6379/2")).toBe("redis://:***@h:6379/2");
    expect(redactUrl("redis://h:6379")).toBe("redis://h:6379");
  });

  it("derives the stalled check from the lock", () => {
    expect(lockOptions(2_000)).toEqual({ lockDuration: 2_000, stalledInterval: 1_000, maxStalledCount: 10 });
    expect(lockOptions()).toMatchObject({ lockDuration: 30_000, stalledInterval: 15_000 });
  });
});
