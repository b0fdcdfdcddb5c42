/**
 * BullMQ and ioredis, the packages of `forge-ts/queue` (optional peers, not in the core install):
 * every queue module takes their classes from here (and their types from the packages, which
 * cost nothing at run time), so without them importing the queue fails here, with one line
 * naming both (ioredis comes with bullmq, but the queue imports it itself).
 */
import { optionalPackages } from "../core/optional-package.js";

const [bullmqModule, ioredisModule] = await optionalPackages("forge-ts/queue", ["bullmq", "ioredis"], () => Promise.all([import("bullmq"), import("ioredis")]));
// Typed as the module: the inferred type names one bullmq does not export (declarations could not be emitted).
export const bullmq: typeof import("bullmq") = bullmqModule;
export const ioredis = ioredisModule;
