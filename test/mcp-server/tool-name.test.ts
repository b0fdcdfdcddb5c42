import { describe, expect, it } from "vitest";
import { mcpToolName } from "../../src/mcp-server/tool-name.js";

describe("mcpToolName", () => {
  it.each([
    ["supplier_quote", "supplier_quote"],
    ["notes.v2-beta", "notes.v2-beta"],
    ["approved quote", "approved_quote"],
    ["Quote: Acme / EU", "Quote_Acme_EU"],
    ["  devis fournisseur été ", "devis_fournisseur_ete"],
    ["???", "workflow"],
    ["a".repeat(200), "a".repeat(128)],
  ])("%j → %j", (name, tool) => {
    expect(mcpToolName(name)).toBe(tool);
    expect(mcpToolName(name)).toMatch(/^[A-Za-z0-9._-]{1,128}$/);
  });
});
