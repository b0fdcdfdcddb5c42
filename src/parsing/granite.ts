/**
 * Marker + JSON list families: IBM Granite 3.x `<|tool_call|>[{"name","arguments"}]` and
 * Phi-4-mini `functools[{"name","arguments"}]` (the list follows the marker directly).
 */
import type { CallSpan, FamilyParser, ScanContext } from "./call-span.js";
import { callsFromValue } from "./call-object.js";
import { decodeJsonSpan, nextFinder, skipWs } from "./json-scan.js";

function markerJson(marker: string, valueAt: (text: string, after: number) => number): FamilyParser {
  return (ctx: ScanContext) => {
    const { text, json } = ctx;
    const find = nextFinder(text, marker);
    const spans: CallSpan[] = [];
    let pos = 0;
    while (true) {
      const at = find(pos);
      if (at < 0) break;
      const start = valueAt(text, at + marker.length);
      const end = json.valueEnd(start);
      const calls = end < 0 ? undefined : callsFromValue(decodeJsonSpan(text, start, end), false);
      if (calls) {
        spans.push({ start: at, end, calls });
        pos = end;
      } else pos = at + marker.length;
    }
    return spans;
  };
}

export const parseGranite: FamilyParser = markerJson("<|tool_call|>", skipWs);
// "functools[" — the list bracket is part of the marker's text.
export const parsePhiFunctools: FamilyParser = markerJson("functools[", (_t, after) => after - 1);
