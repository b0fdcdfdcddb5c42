/**
 * MCP tool names: 1 to 128 characters of letters, digits, `_`, `-` and `.` (the SDK's own
 * check, toolNameValidation.ts). A workflow name may hold anything a string can.
 */

const ALLOWED = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * The MCP tool name of a workflow: its name when that is allowed, else with accents dropped, each
 * run of other characters as one `_`, cut to 128 characters ("workflow" when nothing is left).
 *
 * @example
 * mcpToolName("supplier_quote"); // "supplier_quote"
 * mcpToolName("Quote: Acme / EU"); // "Quote_Acme_EU"
 */
export function mcpToolName(workflowName: string): string {
  if (ALLOWED.test(workflowName)) return workflowName;
  const name = workflowName
    .normalize("NFKD")
    .replace(/\p{M}+/gu, "")
    .replace(/[^A-Za-z0-9._-]+/g, "_")
    .replace(/^_+|_+$/g, "")
    .slice(0, 128);
  return name === "" ? "workflow" : name;
}
