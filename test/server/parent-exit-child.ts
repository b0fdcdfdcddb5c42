// Run by parent-exit.test.ts in its own Node process: start a fake llama-server, print its
// pid, then leave the way argv[2] says ("exit" or "sigterm") without calling stop().
import { fileURLToPath } from "node:url";
import { ServerManager } from "../../src/server/server-manager.js";

const how = process.argv[2];
const port = Number(process.argv[3]);
const fake = fileURLToPath(new URL("../fixtures/fake-llama-server.mjs", import.meta.url));
const server = new ServerManager({ backend: "llamaserver", binary: fake, port, logger: { info: () => {}, warn: () => {} } });
await server.start({ ggufPath: "/m/a.gguf" });
process.stdout.write(`${JSON.stringify({ pid: server.pid })}\n`);
if (how === "sigterm") process.kill(process.pid, "SIGTERM");
else process.exit(0);
