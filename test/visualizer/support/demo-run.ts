/** A demo run into a store, made by the demo CLI as `npm start -- --store <dir>` makes it. */
import { spawn } from "node:child_process";
import { cliArgs } from "../../support/cli.js";

/** Runs the demo (no visualizer: the run is found in the store); resolves with its run id. */
export function demoRun(storeDir: string): Promise<string> {
  const child = spawn(process.execPath, cliArgs("src/cli/demo.ts", "--store", storeDir), { env: { ...process.env, NO_COLOR: "1" } });
  let out = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => (out += d.toString()));
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => {
      const id = /stored\s+run (\S+)/.exec(out)?.[1];
      if (code === 0 && id) resolve(id);
      else reject(new Error(`demo exited ${code}: ${out}`));
    });
  });
}
