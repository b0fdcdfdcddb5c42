/**
 * Property tests run on a fixed seed so CI is reproducible; set FC_SEED to explore others
 * (a failure prints its seed and path for replay).
 */
import fc from "fast-check";

fc.configureGlobal({ seed: Number(process.env.FC_SEED ?? 20261121) });
