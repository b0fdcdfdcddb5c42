import { describe, expect, it } from "vitest";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { clientFactory } from "../../eval/backends.js";
import { probeLines } from "../../eval/probe.js";
import { ALL_SCENARIOS } from "../../eval/scenarios/index.js";

describe("--probe", () => {
  it("reports llama-server's /props context and warns when a scenario budget exceeds it", async () => {
    const server = createServer((req, res) => {
      if (req.url === "/props") {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ default_generation_settings: { n_ctx: 4096 } }));
      } else {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const { port } = server.address() as AddressInfo;
      const make = clientFactory({ backend: "llamaserver", model: "local", mode: "native", baseUrl: `http://127.0.0.1:${port}` });
      const s = ALL_SCENARIOS[0]!;
      const client = await make({ scenario: s, instance: s.build(), seed: 0 });
      const lines = await probeLines("llamaserver", "local", client, ALL_SCENARIOS);
      expect(lines[0]).toBe("backend llamaserver model local: context length 4096 tokens");
      expect(lines[1]).toBe("scenario budgets: 925..8192 tokens (each scenario's own ContextManager budget)");
      expect(lines[2]).toMatch(/exceed the backend's 4096-token window/);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
