/** Counting JSON Schema work in tests (checks and compiles), never timing it. */
import { randomUUID } from "node:crypto";
import { jsonSchemaWork } from "../../src/core/tool.js";

/** A property name no other test has used: compiled shapes live as long as the process. */
export const unique = (): string => `p${randomUUID().replaceAll("-", "")}`;

/**
 * @example
 * work(() => requestToolDefs(tools)); // { checked: 3, compiled: 0, value: defs }
 */
export function work<T>(fn: () => T): { checked: number; compiled: number; value: T } {
  const before = jsonSchemaWork();
  const value = fn();
  const after = jsonSchemaWork();
  return { checked: after.checked - before.checked, compiled: after.compiled - before.compiled, value };
}
