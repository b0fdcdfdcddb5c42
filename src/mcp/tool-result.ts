/**
 * An MCP tools/call answer as a forge tool result. What the model sees must be small and
 * faithful: text parts as text, `structuredContent` as the JSON result, and for an image, an
 * audio clip or a resource a one-line reference (its type, MIME type and size) instead of its
 * base64 data, which would flood a small model's context. The data itself stays with the caller
 * (`onResult` gets the raw answer). `isError: true` becomes a thrown McpToolError, so the runner
 * treats it like any throwing tool: the model sees the server's message on the tool-error channel.
 */
import type { CallToolResult, ContentBlock } from "@modelcontextprotocol/sdk/types.js";
import { McpToolError } from "../core/errors.js";

/**
 * @example
 * mcpResultValue({ content: [{ type: "text", text: "hi" }] }, "s", "echo");                  // "hi"
 * mcpResultValue({ content: [], structuredContent: { t: 21 } }, "s", "weather");              // { t: 21 }
 * mcpResultValue({ content: [{ type: "text", text: "no" }], isError: true }, "s", "read");   // throws McpToolError("no")
 */
export function mcpResultValue(result: CallToolResult, server: string, tool: string): unknown {
  const content = Array.isArray(result.content) ? result.content : [];
  if (result.isError === true) {
    const text = contentText(content) || `the tool reported an error without a message`;
    throw new McpToolError(server, tool, text, result);
  }
  if (result.structuredContent !== undefined && result.structuredContent !== null) return result.structuredContent;
  return contentText(content);
}

/**
 * The parts joined by newlines: text as it is, everything else as a one-line reference.
 *
 * @example contentText([{ type: "image", data: "AAAA", mimeType: "image/png" }]); // "[image image/png, 3 B; not shown]"
 */
export function contentText(content: readonly ContentBlock[]): string {
  return content.map(partText).join("\n");
}

function partText(part: ContentBlock): string {
  switch (part.type) {
    case "text":
      return part.text;
    case "image":
    case "audio":
      return `[${part.type} ${part.mimeType}, ${sizeOf(part.data)}; not shown]`;
    case "resource_link":
      return `[resource link ${part.uri}${part.name ? ` "${part.name}"` : ""}${part.mimeType ? ` (${part.mimeType})` : ""}]`;
    case "resource": {
      const r = part.resource;
      const mime = r.mimeType ? `${r.mimeType}, ` : "";
      // Embedded text is text the server chose to return inline: the model reads it.
      if ("text" in r && typeof r.text === "string") return `[resource ${r.uri} (${mime}${r.text.length} chars)]\n${r.text}`;
      return `[resource ${r.uri} (${mime}${"blob" in r && typeof r.blob === "string" ? sizeOf(r.blob) : "no data"}); not shown]`;
    }
    default:
      return `[${String((part as { type?: unknown }).type)} content; not shown]`;
  }
}

/** The decoded size of base64 data, e.g. "1.6 kB". */
function sizeOf(base64: string): string {
  const padding = base64.endsWith("==") ? 2 : base64.endsWith("=") ? 1 : 0;
  const bytes = Math.max(0, Math.floor((base64.length * 3) / 4) - padding);
  return bytes < 1000 ? `${bytes} B` : bytes < 1_000_000 ? `${(bytes / 1000).toFixed(1)} kB` : `${(bytes / 1_000_000).toFixed(1)} MB`;
}
