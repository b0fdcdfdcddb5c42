/**
 * GET /v1/models: the backend's model list, in the caller's dialect (Anthropic's shape when
 * the request carries `anthropic-version`). A client that cannot list models reports the one
 * it is configured with.
 */
import type { LLMClient, ModelInfo } from "../core/llm.js";
import { errorRecord, toHttpError } from "../proxy-request/http-error.js";

/**
 * @example
 * await listModels(client, "qwen3:8b", false); // { object: "list", data: [{ id: "qwen3:8b", object: "model", ... }] }
 */
export async function listModels(client: LLMClient, configured: string, anthropic: boolean, signal?: AbortSignal): Promise<Record<string, unknown>> {
  let models: ModelInfo[];
  if (client.listModels) {
    try {
      models = await client.listModels(signal ? { signal } : {});
    } catch (error) {
      throw toHttpError(errorRecord(error));
    }
  } else {
    models = configured === "" ? [] : [{ id: configured }];
  }
  return modelListBody(models, anthropic);
}

/**
 * A model list in the caller's dialect (also the fleet's merged list of configured names).
 *
 * @example
 * modelListBody([{ id: "qwen3-8b" }], true); // { data: [{ type: "model", id: "qwen3-8b", ... }], has_more: false, ... }
 */
export function modelListBody(models: readonly ModelInfo[], anthropic: boolean): Record<string, unknown> {
  if (anthropic) {
    const data = models.map((m) => ({
      type: "model",
      id: m.id,
      display_name: m.id,
      created_at: new Date((m.created ?? 0) * 1000).toISOString(),
    }));
    return { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
  }
  return { object: "list", data: models.map((m) => ({ id: m.id, object: "model", created: m.created ?? 0, owned_by: m.ownedBy ?? "forge-ts" })) };
}
