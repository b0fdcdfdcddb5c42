/** How an MCP tools/call answer becomes what the model sees. */
import { describe, expect, it } from "vitest";
import { McpToolError } from "../../src/index.js";
import { contentText, mcpResultValue } from "../../src/mcp/tool-result.js";

describe("mcpResultValue", () => {
  it("text as text, structuredContent as JSON, isError thrown", () => {
    expect(mcpResultValue({ content: [{ type: "text", text: "a" }, { type: "text", text: "b" }] }, "s", "t")).toBe("a\nb");
    expect(mcpResultValue({ content: [{ type: "text", text: "{}" }], structuredContent: { n: 1 } }, "s", "t")).toEqual({ n: 1 });
    expect(mcpResultValue({ content: [] }, "s", "t")).toBe("");
    expect(() => mcpResultValue({ content: [{ type: "text", text: "denied" }], isError: true }, "s", "t")).toThrow(McpToolError);
    expect(() => mcpResultValue({ content: [], isError: true }, "s", "t")).toThrow(/without a message/);
  });

  it("images, audio and resources as one-line references", () => {
    const data = Buffer.alloc(1500).toString("base64");
    expect(
      contentText([
        { type: "image", data, mimeType: "image/png" },
        { type: "audio", data: "AAAA", mimeType: "audio/wav" },
        { type: "resource_link", uri: "file:///a.txt", name: "a.txt", mimeType: "text/plain" },
        { type: "resource", resource: { uri: "file:///b.txt", mimeType: "text/plain", text: "inline" } },
        { type: "resource", resource: { uri: "file:///c.bin", blob: "AAA=" } },
      ]),
    ).toBe(
      [
        "[image image/png, 1.5 kB; not shown]",
        "[audio audio/wav, 3 B; not shown]",
        '[resource link file:///a.txt "a.txt" (text/plain)]',
        "[resource file:///b.txt (text/plain, 6 chars)]\ninline",
        "[resource file:///c.bin (2 B); not shown]",
      ].join("\n"),
    );
  });
});
