/**
 * A string matching a simple regular expression (a JSON Schema `pattern`), for the schema-driven
 * oracle. Simple means: literals, `.`, escapes (`\d \w \s`, their negations, escaped
 * metacharacters, `\xhh`, `\uhhhh`), character classes with ranges (negated ones too), groups
 * with alternatives (the first one is sampled), quantifiers and `^` / `$`. Lookaround,
 * back-references and Unicode properties are not: the answer is then undefined and the caller
 * fails loud. Every answer is checked against the pattern itself before it is returned.
 */

type PatternNode =
  | { kind: "text"; text: string }
  | { kind: "seq"; items: PatternNode[] }
  | { kind: "alt"; first: PatternNode }
  | { kind: "repeat"; node: PatternNode; min: number; max: number };

/** Thrown inside the parser for a construct it does not sample; never leaves this file. */
class NotSimple extends Error {}

/** Characters tried, in order, for a class or a negated escape. */
const CANDIDATES = ["a", "0", "x", "A", "_", "-", " ", ".", "1", "Z", "z", "9"];

const ESCAPE_SAMPLES: Record<string, string> = { d: "0", D: "a", w: "a", W: "-", s: " ", S: "a", t: "\t", n: "\n", r: "\r", f: "\f", v: "\v", "0": "\0" };

/** The pattern as JSON Schema validators compile it (ajv: the `u` flag), else as plain JS (zod's own regexes). */
export function compilePattern(pattern: string): RegExp | undefined {
  for (const flags of ["u", ""]) {
    try {
      return new RegExp(pattern, flags);
    } catch {
      // next flag set
    }
  }
  return undefined;
}

const codePoints = (s: string): number => [...s].length;

/**
 * A shortest-first string that `pattern` matches, within `minLength`..`maxLength` code points,
 * or undefined when the pattern is not simple or no such string was found.
 *
 * @example
 * samplePattern("^PN-\\d{4}$"); // "PN-0000"
 * samplePattern("^[a-z]+$", { minLength: 3 }); // "aaa"
 * samplePattern("^ab", { minLength: 4 }); // "abxx"
 */
export function samplePattern(pattern: string, bounds: { minLength?: number; maxLength?: number } = {}): string | undefined {
  const re = compilePattern(pattern);
  if (!re) return undefined;
  let root: PatternNode;
  try {
    root = new Parser(pattern, re.flags).parse();
  } catch (error) {
    if (error instanceof NotSimple) return undefined;
    throw error;
  }
  const min = bounds.minLength ?? 0;
  const max = bounds.maxLength ?? Infinity;
  const fits = (text: string) => codePoints(text) >= min && codePoints(text) <= max && re.test(text);
  // Each extra repetition granted to the quantifiers lengthens the string or leaves it as is, so
  // min + 1 budgets are enough to reach minLength when the quantifiers can.
  for (let grow = 0; grow <= min; grow++) {
    const text = render(root, { grow });
    if (codePoints(text) > max) break;
    if (fits(text)) return text;
  }
  // An end the pattern does not anchor matches with anything beyond it.
  const shortest = render(root, { grow: 0 });
  const padding = "x".repeat(Math.max(0, min - codePoints(shortest)));
  return [shortest + padding, padding + shortest].find(fits);
}

function render(node: PatternNode, budget: { grow: number }): string {
  switch (node.kind) {
    case "text":
      return node.text;
    case "seq":
      return node.items.map((n) => render(n, budget)).join("");
    case "alt":
      return render(node.first, budget);
    case "repeat": {
      let count = node.min;
      while (count < node.max && budget.grow > 0) {
        count++;
        budget.grow--;
      }
      let out = "";
      for (let i = 0; i < count; i++) out += render(node.node, budget);
      return out;
    }
  }
}

class Parser {
  #at = 0;
  constructor(
    readonly source: string,
    readonly flags: string,
  ) {}

  parse(): PatternNode {
    const node = this.#alternatives();
    if (this.#at < this.source.length) throw new NotSimple(`unexpected "${this.source[this.#at]}"`);
    return node;
  }

  #peek(): string | undefined {
    return this.source[this.#at];
  }

  #alternatives(): PatternNode {
    const first = this.#sequence();
    if (this.#peek() !== "|") return first;
    while (this.#peek() === "|") {
      this.#at++;
      this.#sequence(); // parsed so a construct in it is still judged, but only the first is sampled
    }
    return { kind: "alt", first };
  }

  #sequence(): PatternNode {
    const items: PatternNode[] = [];
    for (let c = this.#peek(); c !== undefined && c !== "|" && c !== ")"; c = this.#peek()) items.push(this.#quantified());
    return { kind: "seq", items };
  }

  #quantified(): PatternNode {
    const node = this.#atom();
    const c = this.#peek();
    let range: [number, number] | undefined;
    if (c === "*") range = [0, Infinity];
    else if (c === "+") range = [1, Infinity];
    else if (c === "?") range = [0, 1];
    else if (c === "{") range = this.#braces();
    if (!range) return node;
    if (c !== "{") this.#at++;
    if (this.#peek() === "?") this.#at++; // lazy: same strings
    return { kind: "repeat", node, min: range[0], max: range[1] };
  }

  /** `{n}`, `{n,}`, `{n,m}`; anything else after "{" is not simple. */
  #braces(): [number, number] {
    const m = /^\{(\d+)(,(\d*))?\}/.exec(this.source.slice(this.#at));
    if (!m) throw new NotSimple("a { that is not a quantifier");
    this.#at += m[0].length;
    const min = Number(m[1]);
    const max = m[2] === undefined ? min : m[3] === "" ? Infinity : Number(m[3]);
    return [min, max];
  }

  #atom(): PatternNode {
    const c = this.source[this.#at++]!;
    switch (c) {
      case "^":
      case "$":
        return { kind: "text", text: "" };
      case ".":
        return { kind: "text", text: "a" };
      case "(":
        return this.#group();
      case "[":
        return { kind: "text", text: this.#characterClass() };
      case "\\":
        return { kind: "text", text: this.#escape() };
      case "*":
      case "+":
      case "?":
      case "{":
      case "}":
      case "]":
        throw new NotSimple(`a bare "${c}"`);
      default:
        return { kind: "text", text: c };
    }
  }

  #group(): PatternNode {
    if (this.#peek() === "?") {
      const head = this.source.slice(this.#at, this.#at + 3);
      if (head.startsWith("?:")) this.#at += 2;
      else if (head.startsWith("?<") && head !== "?<=" && head !== "?<!") {
        const close = this.source.indexOf(">", this.#at);
        if (close < 0) throw new NotSimple("an unterminated group name");
        this.#at = close + 1;
      } else throw new NotSimple("lookaround");
    }
    const inner = this.#alternatives();
    if (this.source[this.#at++] !== ")") throw new NotSimple("an unclosed group");
    return inner;
  }

  /** One character the class `[...]` (just opened) accepts, judged by the class itself. */
  #characterClass(): string {
    const start = this.#at - 1;
    let i = this.#at;
    const negated = this.source[i] === "^";
    if (negated) i++;
    const bodyStart = i;
    while (i < this.source.length && this.source[i] !== "]") i += this.source[i] === "\\" ? 2 : 1;
    if (i >= this.source.length) throw new NotSimple("an unclosed class");
    this.#at = i + 1;
    const body = this.source.slice(bodyStart, i);
    if (body === "") {
      if (negated) return "a";
      throw new NotSimple("an empty class");
    }
    const klass = new RegExp(`^(?:${this.source.slice(start, i + 1)})$`, this.flags);
    const firstMember = negated ? [] : [body[0] === "\\" ? (ESCAPE_SAMPLES[body[1] ?? ""] ?? body[1] ?? "") : [...body][0]!];
    const pick = [...firstMember, ...CANDIDATES].find((ch) => ch !== "" && klass.test(ch));
    if (pick === undefined) throw new NotSimple("a class none of the sample characters is in");
    return pick;
  }

  /** The character an escape outside a class stands for (after the backslash). */
  #escape(): string {
    const c = this.source[this.#at++];
    if (c === undefined) throw new NotSimple("a trailing backslash");
    if (Object.hasOwn(ESCAPE_SAMPLES, c)) return ESCAPE_SAMPLES[c]!;
    if (c === "b" || c === "B") return ""; // a word boundary: the final check judges it
    if (/[1-9k]/.test(c)) throw new NotSimple("a back-reference");
    if (c === "p" || c === "P" || c === "c") throw new NotSimple(`\\${c}`);
    const hex = c === "x" ? /^[0-9a-fA-F]{2}/ : c === "u" ? /^(?:\{[0-9a-fA-F]+\}|[0-9a-fA-F]{4})/ : undefined;
    if (hex) {
      const m = hex.exec(this.source.slice(this.#at));
      if (!m) throw new NotSimple(`a malformed \\${c}`);
      this.#at += m[0].length;
      return String.fromCodePoint(parseInt(m[0].replace(/[{}]/g, ""), 16));
    }
    return c;
  }
}
