import { expect, it } from "vitest";
import { aiSdk7Run } from "../../eval/bench/runner-ai-sdk7.js";

it("runs the AI SDK 7 loop for exactly N steps, ending on finish", async () => {
  await expect(aiSdk7Run(3)).resolves.toBeUndefined();
});
