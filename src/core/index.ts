export * from "./errors.js";
export * from "./messages.js";
export * from "./llm.js";
export * from "./tool.js";
export * from "./workflow.js";
export * from "./json-value.js";
export * from "./wire-messages.js";
