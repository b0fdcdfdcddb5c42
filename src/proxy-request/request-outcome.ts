/** How a proxy-request run ended, as its caller (the proxy's HTTP app, forge-ts/ai-sdk) sees it. */
import type { ProxyOutcome } from "./proxy-request.js";
import type { ProxyContext } from "./request-context.js";

/**
 * The final state of a proxy-request run as the caller sees it.
 *
 * @example
 * const outcome = outcomeOf(stateName(snapshot.value), snapshot.context);
 */
export function outcomeOf(state: string, ctx: ProxyContext & { cancelReason?: string }): ProxyOutcome {
  switch (state) {
    case "responding":
    case "exhausted": {
      const outcome: ProxyOutcome = { kind: "answer", answer: ctx.answer!, usage: ctx.usage, attempts: ctx.attempts, rescued: ctx.rescued };
      if (ctx.exhausted) outcome.exhausted = ctx.exhausted;
      return outcome;
    }
    case "failed":
      return { kind: "failed", error: ctx.error!, attempts: ctx.attempts };
    case "cancelled":
      return { kind: "cancelled", reason: ctx.cancelReason ?? "cancelled" };
    default:
      throw new Error(`proxy-request machine stopped in a non-final state "${state}"`);
  }
}
