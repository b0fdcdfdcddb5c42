/** Rescue parsing: tool calls from model text in every supported open-model format. */
export { rescueToolCall, extractToolCalls, findCallSpans } from "./rescue.js";
export { splitReasoning } from "./think.js";
export { buildToolPrompt } from "./tool-prompt.js";
export { renderToolCalls, supportsParallel, RESCUE_FORMATS } from "./render.js";
export type { RescueFormat, RenderableCall } from "./render.js";
export type { CallSpan } from "./call-span.js";
