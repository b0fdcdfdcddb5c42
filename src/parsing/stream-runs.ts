/**
 * The runs of text the streaming judge reads whose length it does not bound: the leading
 * whitespace, the digits, dots and dashes before a position (is a name starting there?), and the
 * whitespace and name runs after an opener. A construct waiting at the end of the text is
 * classified again on every delta, so each run keeps how far it reached and the next read goes
 * on from there: every run is read once, however the text is split.
 */
import { isIdentPart, isIdentStart } from "./call-span.js";
import { isWs } from "./json-scan.js";
import type { StreamText } from "./stream-text.js";

export class StreamRuns {
  private leadAt = 0;
  private nameProbe = 0;
  /** The last position before nameProbe that is not a digit, '.' or '-' (-1: none). */
  private nameMark = -1;
  /** Reaches of the runs read for one position (`from`), dropped when the judge moves on. */
  private forPosition = -1;
  private readonly wsReach = new Map<number, number>();
  private readonly nameReach = new Map<number, number>();

  constructor(private readonly text: StreamText) {}

  /** Where the text starts after its leading whitespace (its length while it is all whitespace). */
  lead(): number {
    while (this.leadAt < this.text.length && isWs(this.text.code(this.leadAt))) this.leadAt++;
    return this.leadAt;
  }

  /**
   * A tool name read backwards from a `[ARGS]` token would start at i (call-span.ts identStart:
   * digits, dots and dashes before it are skipped, a letter or `_` would join the name). The
   * judge asks for positions in order, so the last other character is tracked going forward.
   */
  startsName(i: number): boolean {
    if (i < this.nameProbe) [this.nameProbe, this.nameMark] = [0, -1];
    for (; this.nameProbe < i; this.nameProbe++) {
      const c = this.text.code(this.nameProbe);
      if (!isIdentPart(c) || isIdentStart(c)) this.nameMark = this.nameProbe;
    }
    return this.nameMark < 0 || !isIdentStart(this.text.code(this.nameMark));
  }

  /** The judge classifies position i: reaches kept for an earlier position are no use any more. */
  moveTo(i: number): void {
    if (i === this.forPosition) return;
    this.forPosition = i;
    if (this.wsReach.size > 0) this.wsReach.clear();
    if (this.nameReach.size > 0) this.nameReach.clear();
  }

  /** json-scan.ts skipWs: the first position from `from` that is not JSON whitespace. */
  skipWs(from: number): number {
    let at = this.wsReach.get(from) ?? from;
    while (at < this.text.length && isWs(this.text.code(at))) at++;
    this.wsReach.set(from, at);
    return at;
  }

  /** call-span.ts identEnd: the end of the tool-name identifier at `from` (`from` when none). */
  identEnd(from: number): number {
    if (!isIdentStart(this.text.code(from))) return from;
    let at = this.nameReach.get(from) ?? from + 1;
    while (at < this.text.length && isIdentPart(this.text.code(at))) at++;
    this.nameReach.set(from, at);
    return at;
  }
}
