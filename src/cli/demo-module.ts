/**
 * The demo's workflow as a workflow module, so a demo run recorded in a store continues like any
 * other: `forge-ts runs retry|resume|replay <id> --workflow <this file>` (with `--backend sim` the
 * simulated model plays the demo's oracle). A demo run recorded in a store names this file as its
 * module, so those commands find it without --workflow; the interrupted demo prints one.
 */
import { fileURLToPath } from "node:url";
import { DEMO_APPROVAL_ABOVE_USD, supplierQuoteWorkflow } from "./demo-workflow.js";

const demo = supplierQuoteWorkflow({ approvalAboveUsd: DEMO_APPROVAL_ABOVE_USD });

export const workflow = demo.workflow;
export const oracle = demo.oracle;

/** This module's path as the demo records it: `.ts` under tsx in a checkout, `.js` from the package. */
export const DEMO_MODULE_PATH = fileURLToPath(import.meta.url);

