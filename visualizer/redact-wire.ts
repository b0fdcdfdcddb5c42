/**
 * A visualizer wire event with tool-call arguments masked (each tool's `redact` names). Applied
 * where events are made (wire.ts, in the run's process) and again where they are taken in
 * (feed.ts), so a page never gets a masked value, whatever inspector sent the event. Masking
 * twice is masking once.
 */
import { REDACTED } from "../src/telemetry/redact.js";
import { redactContext, redactEmitted, redactionMapIn, redactResponse, mergeRedactionMaps, type RedactionMap } from "../src/telemetry/redact-run.js";
import type { WireEvent } from "./protocol.js";

/**
 * @example
 * redactWireEvent(event, { login: ["password"] }); // the same event, with login's password masked
 */
export function redactWireEvent(event: WireEvent, map: RedactionMap | undefined): WireEvent {
  switch (event.type) {
    case "@xstate.snapshot": {
      // A snapshot carries its run's own map too (context.run.redact).
      const redact = mergeRedactionMaps(redactionMapIn(event.snapshot.context), map);
      if (!redact) return event;
      return { ...event, snapshot: { ...event.snapshot, context: redactContext(event.snapshot.context, redact, "report") } };
    }
    case "@xstate.action":
      if (!map) return event;
      return { ...event, action: { ...event.action, event: redactEmitted(event.action.event, map) } };
    case "forge.chunk": {
      if (!map) return event;
      const { chunk } = event;
      if (chunk.type === "final") return { ...event, chunk: { ...chunk, response: redactResponse(chunk.response, map) } };
      // A streamed piece of a call's argument JSON cannot be masked by name (the names may be
      // split across pieces): in a run that masks anything, argument text is not streamed.
      if (chunk.type === "tool_call_delta") return { ...event, chunk: { ...chunk, content: REDACTED } };
      return event;
    }
    default:
      return event;
  }
}
