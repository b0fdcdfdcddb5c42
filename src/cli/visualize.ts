/**
 * `forge-ts visualize`: serve the live run visualizer (page, feed, stored runs) on loopback.
 * Every flag also reads a FORGE_* environment variable; flags win.
 */
import { InvalidArgumentError } from "../core/errors.js";
import type { Workflow } from "../core/workflow.js";
import { workflowMachine } from "../../machines/workflow.machine.js";
import { buildPageInCheckout } from "../../visualizer/page-files.js";
import { cliCommand } from "../cli-kit/cli-command.js";
import { createVisualizer } from "../../visualizer/server.js";
import { forwardToStately, statelyInspector } from "../../visualizer/stately.js";
import { redactUrl } from "../core/redact.js";
import { DEMO_APPROVAL_ABOVE_USD, supplierQuoteWorkflow } from "./demo-workflow.js";
import { loadWorkflow } from "./workflow-module.js";
import { intFlag } from "../cli-kit/int-flag.js";
import { parseCliArgs } from "./parse-cli-args.js";
import { openStore, storeSpec } from "./store.js";

export const VISUALIZE_HELP = `Usage: forge-ts visualize [options]

Serves the live run visualizer: open the printed URL, then run workflows with
WorkflowRunner({ inspect: visualizerInspector("<url>") }) or \`npm start -- --visualize\`.
Runs in the store are listed and can be replayed from their event logs.

  --port <n>            default 4848                                              [FORGE_VISUALIZER_PORT]
  --host <addr>         default 127.0.0.1 (loopback only)                         [FORGE_VISUALIZER_HOST]
  --store <dir|url>     run store to list and replay: a directory (default ./.forge), a libSQL URL or postgres://… [FORGE_STORE]
  --no-store            list live runs only
  --workflow <module>   a module exporting a Workflow whose stored runs can be replayed
                        (repeatable; the demo's supplier-quote workflow is built in)
  --max-events <n>      events kept per live run, default 20000                    [FORGE_VISUALIZER_MAX_EVENTS]
  --redis <url>         also show the counts of the forge-ts job queues on this Redis  [FORGE_REDIS]
  --stately             also send the inspection events to Stately's online inspector (needs the internet)
  -h, --help

Run from a checkout, it first builds the page from visualizer/page/src (the package ships it built).

Exit codes: 0 after a clean shutdown (Ctrl-C / SIGTERM), 1 the page could not be built or the server
could not start, 2 bad flags.`;

/** Parse flags and env; serve until SIGINT/SIGTERM. Resolves to the exit code. */
export async function visualizeMain(args: readonly string[], signals: NodeJS.EventEmitter = process, version = ""): Promise<number> {
  const env = process.env;
  const str = (name: string) => (env[name] !== undefined && env[name] !== "" ? { default: env[name] } : {});
  const { values } = parseCliArgs({
    args: [...args],
    options: {
      port: { type: "string", ...str("FORGE_VISUALIZER_PORT") },
      host: { type: "string", default: env.FORGE_VISUALIZER_HOST || "127.0.0.1" },
      store: { type: "string" },
      "no-store": { type: "boolean", default: false },
      workflow: { type: "string", multiple: true },
      "max-events": { type: "string", ...str("FORGE_VISUALIZER_MAX_EVENTS") },
      stately: { type: "boolean", default: false },
      redis: { type: "string", ...str("FORGE_REDIS") },
      help: { type: "boolean", short: "h", default: false },
    },
    allowPositionals: false,
  });
  if (values.help) {
    console.log(VISUALIZE_HELP);
    return 0;
  }
  if (values["no-store"] && args.some((a) => a === "--store" || a.startsWith("--store="))) throw new InvalidArgumentError("--no-store", "not with --store");
  const port = intFlag("port", values.port, { min: 0, max: 65_535 }) ?? 4848;
  const maxEventsPerRun = intFlag("max-events", values["max-events"], { min: 100, max: 10_000_000 });
  const opened = values["no-store"] ? undefined : await openStore(storeSpec(values.store, ".forge"));
  const store = opened?.store;
  // The demo's own workflow, approval rule included, so its stored runs replay as they ran.
  const workflows: Workflow[] = [supplierQuoteWorkflow({ approvalAboveUsd: DEMO_APPROVAL_ABOVE_USD }).workflow];
  for (const module of values.workflow ?? []) workflows.push(await loadWorkflow(module));

  // From a checkout the page is built from its sources first (the package ships it built).
  try {
    await buildPageInCheckout();
  } catch (error) {
    console.error(`forge-ts visualize: cannot build the page: ${(error as Error).message}`);
    return 1;
  }
  const queues = values.redis ? (await import("../queue/counts.js")).queueCounter(values.redis) : undefined;
  let stately: Awaited<ReturnType<typeof statelyInspector>> | undefined;
  if (values.stately) stately = await statelyInspector((error) => console.error(`forge-ts visualize: Stately inspector: ${error.message}`));
  const visualizer = createVisualizer({
    ...(store ? { store } : {}),
    workflows,
    version,
    ...(maxEventsPerRun !== undefined ? { feed: { maxEventsPerRun } } : {}),
    ...(stately ? { onIngest: forwardToStately(stately, JSON.stringify(workflowMachine.config)) } : {}),
    ...(queues ? { queues } : {}),
  });

  let url: string;
  try {
    ({ url } = await visualizer.listen({ port, host: values.host }));
  } catch (error) {
    stately?.stop();
    await queues?.close();
    console.error(`forge-ts visualize: cannot listen on ${values.host}:${port}: ${(error as Error).message}`);
    return 1;
  }
  console.log(`forge-ts visualizer on ${url}  (page ${(visualizer.pageBytes / 1024).toFixed(1)} KiB, no outside requests)`);
  console.log(`  stored runs: ${opened ? opened.label : "none (--no-store)"}; replayable workflows: ${workflows.map((w) => w.name).join(", ")}${values.redis ? `; queues on ${redactUrl(values.redis)}` : ""}`);
  const flag = `--visualize${port === 4848 ? "" : ` --visualizer-url ${url}`}`;
  console.log(`  watch a run: ${cliCommand()} demo ${flag}, or WorkflowRunner({ inspect: visualizerInspector("${url}") })`);

  await new Promise<void>((resolve) => {
    const stop = (name: string) => {
      console.log(`forge-ts visualize: ${name}, shutting down`);
      resolve();
    };
    signals.once("SIGINT", () => stop("SIGINT"));
    signals.once("SIGTERM", () => stop("SIGTERM"));
  });
  stately?.stop();
  await visualizer.close();
  await queues?.close();
  return 0;
}
