/**
 * `forge-ts visualize --stately`: the inspection events the visualizer receives also go to
 * Stately's hosted inspector (for people who are online), through @statelyai/inspect's manual
 * API, which names actors by session id as our wire events do.
 */
import { optionalPackages } from "../src/core/optional-package.js";
import type { RootSnapshot, WireEvent } from "./protocol.js";

/** The part of @statelyai/inspect's Inspector the bridge uses. */
export interface StatelyInspectorLike {
  actor(actor: string, snapshot?: { status: string; context?: unknown; value?: unknown }, info?: { definition?: string; parentId?: string; rootId?: string }): void;
  event(actor: string, event: { type: string }, info?: { source?: string }): void;
  snapshot(actor: string, snapshot: { status: string; context?: unknown; value?: unknown }, info?: { event?: { type: string } }): void;
}

/** Sessions are per process: a run's session ids are prefixed with its run id so two processes' `x:0` stay apart. */
const actorName = (e: WireEvent, sessionId: string) => `${e.runId}/${sessionId}`;

export function forwardToStately(inspector: StatelyInspectorLike, definition: string): (events: readonly WireEvent[]) => void {
  return (events) => {
    for (const e of events) {
      const self = actorName(e, e.sessionId);
      switch (e.type) {
        case "@xstate.actor":
          inspector.actor(self, { status: "active" }, {
            rootId: actorName(e, e.rootId),
            ...(e.parentId ? { parentId: actorName(e, e.parentId) } : {}),
            ...(e.sessionId === e.rootId ? { definition } : {}),
          });
          break;
        case "@xstate.event":
          inspector.event(self, e.event, e.sourceId ? { source: actorName(e, e.sourceId) } : {});
          break;
        case "@xstate.snapshot":
          inspector.snapshot(self, stately(e.snapshot), { event: e.event });
          break;
        default:
          break; // microsteps, emitted events and chunks are ours only
      }
    }
  };
}

const stately = (s: RootSnapshot) => ({ status: s.status, value: s.value, context: s.context });

/** Stately's online inspector (needs the internet and the optional peer @statelyai/inspect); it prints the URL to open. */
export async function statelyInspector(onError: (error: Error) => void): Promise<StatelyInspectorLike & { stop(): void }> {
  const { createSkyInspector } = await optionalPackages("forge-ts visualize --stately", ["@statelyai/inspect"], () => import("@statelyai/inspect"));
  const inspector = createSkyInspector({ onerror: onError });
  return {
    actor: (a, s, i) => inspector.actor(a, s as never, i),
    event: (a, e, i) => inspector.event(a, e, i),
    snapshot: (a, s, i) => inspector.snapshot(a, s as never, i),
    stop: () => inspector.stop(),
  };
}
