/**
 * The README's quick start, runnable as written on a fresh clone (no model server needed):
 * `npx tsx eval/examples/quick-start.ts`. The model is the embedded simulated small model
 * (it makes the mistakes 8B models make, from a seed); swap in `new OllamaClient({ model: "qwen3:8b" })`
 * for a real one. `forge-ts` resolves to src/ in a checkout (tsconfig `paths`) and to the
 * package once installed.
 */
import { z } from "zod";
import { ContextManager, defineTool, SimulatedClient, TieredCompact, Workflow, WorkflowRunner, type Oracle } from "forge-ts";

const getWeather = defineTool({
  name: "get_weather", description: "Current weather for a city",
  parameters: z.object({ city: z.string() }),
  execute: async ({ city }) => ({ city, tempC: 21 }),
});
const answer = defineTool({
  name: "answer", description: "Give the final answer to the user",
  parameters: z.object({ text: z.string() }),
  execute: ({ text }) => text,
});
const workflow = new Workflow({
  name: "weather", tools: { get_weather: getWeather, answer },
  requiredSteps: ["get_weather"], // must succeed before a terminal tool may run
  terminalTool: "answer", // its result is the run's result
  systemPromptTemplate: "You answer weather questions for {team}. Always act through tools.",
});
// What a perfect model would do next; the simulated model wraps it in small-model mistakes.
const oracle: Oracle = ({ results }) =>
  results.some((r) => r.tool === "get_weather" && !r.isError)
    ? { tool: "answer", args: { text: "Yes: 21 °C in Lisbon." } }
    : { tool: "get_weather", args: { city: "Lisbon" } };
const runner = new WorkflowRunner({
  client: new SimulatedClient({ oracle, workflow, profile: "small-model", seed: 3 }),
  contextManager: new ContextManager({ strategy: new TieredCompact({ keepRecent: 2 }), budgetTokens: 8192 }),
  onMessage: (m) => console.log(m.meta.type.padEnd(14), m.toolCalls?.map((c) => `${c.name}(${JSON.stringify(c.args)})`).join(" ") ?? m.content),
});
const text = await runner.run(workflow, "Is it warm in Lisbon?", { promptVars: { team: "ops" } });
console.log("result:", text);
