/**
 * The last lines a server process wrote to stderr, kept bounded so a chatty server cannot grow
 * memory; errors about the server end with them.
 */
export class StderrTail {
  #text = "";

  constructor(
    readonly maxChars = 4_000,
    readonly maxLines = 20,
  ) {}

  push(chunk: string): void {
    this.#text = (this.#text + chunk).slice(-this.maxChars);
  }

  /** @example tail.push("a\nb\n"); tail.text(); // "a\nb" */
  text(): string {
    return this.#text.trimEnd().split("\n").slice(-this.maxLines).join("\n");
  }
}
