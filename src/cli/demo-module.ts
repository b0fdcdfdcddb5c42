/**
 * The demo's workflow as a workflow module, so a demo run recorded in a store continues like any
 * other: `forge-ts runs retry|resume|replay <id> --workflow <this file>` (with `--backend sim` the
 * simulated model plays the demo's oracle). The interrupted demo prints that command.
 */
import { fileURLToPath } from "node:url";
import path from "node:path";
import { DEMO_APPROVAL_ABOVE_USD, supplierQuoteWorkflow } from "./demo-workflow.js";

const demo = supplierQuoteWorkflow({ approvalAboveUsd: DEMO_APPROVAL_ABOVE_USD });

export const workflow = demo.workflow;
export const oracle = demo.oracle;

/** This module's path as the demo prints it: `.ts` under tsx in a checkout, `.js` from the package. */
export const DEMO_MODULE_PATH = fileURLToPath(import.meta.url);

/** The path relative to the working directory when it is inside it (shorter to paste), else absolute. */
export function demoModuleArg(cwd = process.cwd()): string {
  const rel = path.relative(cwd, DEMO_MODULE_PATH);
  return rel.startsWith("..") || path.isAbsolute(rel) ? DEMO_MODULE_PATH : rel;
}
