/** Deep links: the address names the run, the step, the compared run and the filters. */
import { describe, expect, it } from "vitest";
import { formatHash, parseHash } from "../../../visualizer/page/src/url-state.js";

describe("url state", () => {
  it("round-trips a run, a step, a compared run and the filters", () => {
    const hash = formatHash({ run: "demo-a/b", step: 7, compare: "demo-c", filter: { text: "rescue", status: "done", workflow: "quote", session: "" }, hide: ["system", "reasoning"], find: "lookup" });
    expect(hash).toBe("#run=demo-a%2Fb&step=7&compare=demo-c&q=rescue&status=done&workflow=quote&hide=system%2Creasoning&find=lookup");
    expect(parseHash(hash)).toEqual({ run: "demo-a/b", step: 7, compare: "demo-c", filter: { text: "rescue", status: "done", workflow: "quote", session: "" }, hide: ["system", "reasoning"], find: "lookup" });
  });

  it("reads the old #run= links and ignores a bad step", () => {
    expect(parseHash("#run=demo-x")).toMatchObject({ run: "demo-x", hide: [], find: "" });
    expect(parseHash("#run=x&step=-2").step).toBeUndefined();
    expect(parseHash("#run=x&step=abc").step).toBeUndefined();
    expect(parseHash("")).toEqual({ filter: { text: "", status: "", workflow: "", session: "" }, hide: [], find: "" });
  });

  it("writes nothing for an empty state", () => {
    expect(formatHash(parseHash(""))).toBe("");
  });
});
