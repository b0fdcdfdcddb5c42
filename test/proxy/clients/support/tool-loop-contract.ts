/**
 * One contract for every client harness (Hono's `common.case.test.ts` shape): the client runs
 * its own multi-step tool loop through the proxy, in front of the small model of
 * small-model.ts, on an Ollama and an OpenAI-compatible backend, streamed and not. Each
 * client's file supplies only a driver that runs the loop and reports what the client saw.
 */
import { describe, expect, it } from "vitest";
import { proxyRig, type Rig } from "../../support/harness.js";
import { FINAL_ANSWER, isToolResult, messagesOf, nudgesIn, PROSE, smallModel, textOf, type SmallModelOptions } from "./small-model.js";
import { CONVERSION_RESULT, WEATHER_RESULT, weatherTools, type WeatherTools } from "./weather-tools.js";

/** One assistant turn as the client's API exposed it. */
export interface ClientTurn {
  /** Text the client surfaced for the turn ("" for none); for a call turn, the prose beside it. */
  text: string;
  calls: { name: string; args: unknown }[];
}

export interface DriveOptions {
  /** The proxy's base URL without /v1. */
  url: string;
  stream: boolean;
  /** The executor every client tool must call. */
  tools: WeatherTools;
}

/** Runs the client's tool loop from PROMPT to its final answer; returns the turns in order. */
export type LoopDriver = (options: DriveOptions) => Promise<ClientTurn[]>;

const MODES: ["ollama" | "openai", boolean][] = [
  ["ollama", false],
  ["ollama", true],
  ["openai", false],
  ["openai", true],
];

const EXPECTED_CALLS = [
  [{ name: "get_weather", args: { city: "Oslo" } }],
  [{ name: "convert_temperature", args: { celsius: 21, to: "fahrenheit" } }],
  [],
];

/**
 * @example
 * describeToolLoop("openai SDK", async ({ url, stream, tools }) => [...turns]);
 */
export function describeToolLoop(client: string, drive: LoopDriver): void {
  async function run(wire: "ollama" | "openai", stream: boolean, options: SmallModelOptions) {
    const rig = await proxyRig(smallModel(options), { wire });
    const tools = weatherTools();
    const turns = await drive({ url: rig.url, stream, tools });
    return { rig, tools, turns };
  }

  describe.each(MODES)(`${client} through the proxy, %s backend, stream %s`, (wire, stream) => {
    it("runs the two-tool loop to the answer past an unknown tool, invalid arguments and a text call", async () => {
      const { rig, tools, turns } = await run(wire, stream, { misspelling: "native" });
      expectCleanLoop(rig, tools, turns);
      const chats = rig.chats();
      expect(nudgesIn(chats[1]).join("\n"), "unknown-tool nudge").toMatch(/get_wether[\s\S]*get_weather/);
      const invalid = nudgesIn(chats[3]).join("\n");
      expect(invalid, "invalid-arguments nudge").toContain("convert_temperature");
      expect(invalid, "invalid-arguments nudge").toContain("celsius");
    });

    it("never shows the client a bare-JSON call to an unknown tool: the proxy retries it with the unknown-tool nudge", async () => {
      const { rig, tools, turns } = await run(wire, stream, { misspelling: "bare-json" });
      expect(JSON.stringify(turns), "what the client saw").not.toContain("get_wether");
      const nudge = nudgesIn(rig.chats()[1]).join("\n");
      expect(nudge, "the nudge on the backend's second request").toContain("get_wether");
      expect(nudge, "the nudge lists the tools on offer").toMatch(/get_weather[\s\S]*convert_temperature/);
      expectCleanLoop(rig, tools, turns);
    });

    it("hands the client the prose written before a text call, beside the call", async () => {
      const { turns } = await run(wire, stream, { misspelling: "native" });
      expect(turns[1]).toEqual({ text: PROSE, calls: EXPECTED_CALLS[1] });
    });
  });
}

/** The loop ran to the answer, each tool once, and no failed attempt reached the client. */
function expectCleanLoop(rig: Rig, tools: WeatherTools, turns: ClientTurn[]): void {
  expect(turns.map((t) => t.calls), "the calls the client saw, turn by turn").toEqual(EXPECTED_CALLS);
  expect(turns.at(-1)?.text).toBe(FINAL_ANSWER);
  expect(tools.executions).toEqual(EXPECTED_CALLS.flat());
  expect(JSON.stringify(turns), "what the client saw").not.toMatch(/get_wether|warm/);
  // Backend: misspelled try, retry; invalid-arguments try, retry; answer.
  const chats = rig.chats();
  expect(chats).toHaveLength(5);
  // Requests 2 and 4 are the client's own (its turns 2 and 3): its history holds no failed attempt.
  for (const i of [2, 4]) expect(JSON.stringify(messagesOf(chats[i])), `the client's history in backend request ${i}`).not.toMatch(/get_wether|warm/);
  expect(messagesOf(chats[4]).filter(isToolResult).map(textOf)).toEqual([WEATHER_RESULT, CONVERSION_RESULT]);
  expect(rig.proxy.stats()).toMatchObject({ requests: 3, retries: 2, exhausted: 0 });
}
