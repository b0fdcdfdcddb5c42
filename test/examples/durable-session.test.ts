/** The README's durable session example: two turns in two processes share one conversation. */
import { execFile } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);

describe("durable session example", () => {
  it("the second process continues the first one's conversation from the store", async () => {
    const env = { ...process.env, FORGE_STORE: mkdtempSync(path.join(tmpdir(), "forge-session-")) };
    const turn = (text: string) => run(process.execPath, ["--import", "tsx", "eval/examples/durable-session.ts", text], { env });
    expect((await turn("Remember that the deploy is on Friday.")).stdout.trim()).toBe("I remember 1 fact(s). (session history: 6 messages, 1 turn(s))");
    expect((await turn("What do you remember?")).stdout.trim()).toBe("I remember 2 fact(s). (session history: 11 messages, 2 turn(s))");
  }, 300_000);
});
