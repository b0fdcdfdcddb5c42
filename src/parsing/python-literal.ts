/**
 * A small recursive-descent reader for the Python literals pythonic calls use: str (single or
 * double quoted, with escapes), int/float, True/False/None (and JSON's true/false/null), list,
 * tuple (read as an array) and dict with string keys. Nesting deeper than MAX_DEPTH is refused
 * (that is not a real call and would risk the stack).
 */
import type { ToolCall } from "../core/llm.js";
import { setOwn } from "../core/set-own.js";
import { identEnd, makeCall } from "./call-span.js";
import { skipWs } from "./json-scan.js";

const MAX_DEPTH = 256;

export class PyReader {
  pos: number;
  constructor(
    readonly text: string,
    pos: number,
  ) {
    this.pos = pos;
  }

  ws(): void {
    this.pos = skipWs(this.text, this.pos);
  }

  eat(ch: string): boolean {
    this.ws();
    if (this.text.charAt(this.pos) !== ch) return false;
    this.pos++;
    return true;
  }

  peek(): string {
    this.ws();
    return this.text.charAt(this.pos);
  }

  ident(): string | undefined {
    this.ws();
    const end = identEnd(this.text, this.pos);
    if (end === this.pos) return undefined;
    const name = this.text.slice(this.pos, end);
    this.pos = end;
    return name;
  }

  /**
   * One keyword-argument call `name(k=v, …)` starting here (the shape pythonic lists and Gemma 3
   * tool_code share); undefined when it is anything else, positional arguments included.
   */
  call(): ToolCall | undefined {
    const name = this.ident();
    if (name === undefined || this.text.charAt(this.pos) !== "(") return undefined;
    this.pos++;
    const args: Record<string, unknown> = {};
    while (!this.eat(")")) {
      const key = this.ident();
      if (key === undefined || !this.eat("=")) return undefined;
      const v = this.value();
      if (!v.ok) return undefined;
      setOwn(args, key, v.value);
      if (!this.eat(",") && this.peek() !== ")") return undefined;
    }
    return makeCall(name, args);
  }

  /** One literal; `undefined` with pos unchanged semantics irrelevant (callers abort). */
  value(depth = 0): { ok: true; value: unknown } | { ok: false } {
    if (depth > MAX_DEPTH) return { ok: false };
    const c = this.peek();
    if (c === '"' || c === "'") return this.string(c);
    if (c === "[" || c === "(") return this.sequence(c === "[" ? "]" : ")", depth);
    if (c === "{") return this.dict(depth);
    const num = /^-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?/.exec(this.text.slice(this.pos, this.pos + 64));
    if (num) {
      this.pos += num[0].length;
      return { ok: true, value: Number(num[0]) };
    }
    const word = this.ident();
    if (word === "True" || word === "true") return { ok: true, value: true };
    if (word === "False" || word === "false") return { ok: true, value: false };
    if (word === "None" || word === "null") return { ok: true, value: null };
    return { ok: false };
  }

  private string(quote: string): { ok: true; value: string } | { ok: false } {
    const t = this.text;
    let i = this.pos + 1;
    let out = "";
    while (i < t.length) {
      const ch = t.charAt(i);
      if (ch === quote) {
        this.pos = i + 1;
        return { ok: true, value: out };
      }
      if (ch !== "\\") {
        out += ch;
        i++;
        continue;
      }
      const e = t.charAt(i + 1);
      const simple: Record<string, string> = { n: "\n", t: "\t", r: "\r", b: "\b", f: "\f", "0": "\0", "\\": "\\", "'": "'", '"': '"', "/": "/" };
      if (e in simple) {
        out += simple[e];
        i += 2;
      } else if (e === "u" || e === "x") {
        const len = e === "u" ? 4 : 2;
        const hex = t.slice(i + 2, i + 2 + len);
        if (!new RegExp(`^[0-9a-fA-F]{${len}}$`).test(hex)) return { ok: false };
        out += String.fromCharCode(parseInt(hex, 16));
        i += 2 + len;
      } else if (e === "\n") {
        i += 2; // line continuation
      } else return { ok: false };
    }
    return { ok: false };
  }

  private sequence(close: string, depth: number): { ok: true; value: unknown[] } | { ok: false } {
    this.pos++;
    const items: unknown[] = [];
    while (!this.eat(close)) {
      const v = this.value(depth + 1);
      if (!v.ok) return v;
      items.push(v.value);
      if (!this.eat(",") && this.peek() !== close) return { ok: false };
    }
    return { ok: true, value: items };
  }

  private dict(depth: number): { ok: true; value: Record<string, unknown> } | { ok: false } {
    this.pos++;
    const out: Record<string, unknown> = {};
    while (!this.eat("}")) {
      const c = this.peek();
      if (c !== '"' && c !== "'") return { ok: false };
      const k = this.string(c);
      if (!k.ok || !this.eat(":")) return { ok: false };
      const v = this.value(depth + 1);
      if (!v.ok) return v;
      setOwn(out, k.value, v.value);
      if (!this.eat(",") && this.peek() !== "}") return { ok: false };
    }
    return { ok: true, value: out };
  }
}

/** Python source for a JSON value (the inverse of PyReader for JSON data). */
export function toPythonLiteral(value: unknown): string {
  if (value === null || value === undefined) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  if (typeof value === "number") return Number.isFinite(value) ? JSON.stringify(value) : "None";
  if (typeof value === "string") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(toPythonLiteral).join(", ")}]`;
  const entries = Object.entries(value as Record<string, unknown>);
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}: ${toPythonLiteral(v)}`).join(", ")}}`;
}
