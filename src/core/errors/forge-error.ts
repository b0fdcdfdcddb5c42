/**
 * The base class every forge-ts error extends, its JSON form, and the error for a bad option.
 */

import { redactText } from "../redact.js";

const kForgeError = Symbol.for("forge-ts.error");

export interface ErrorJSON {
  name: string;
  code: string;
  message: string;
  data: Record<string, unknown>;
}

export class ForgeError extends Error {
  readonly code: string = "FORGE_ERROR";
  readonly [kForgeError] = true;

  constructor(message: string, options?: { cause?: unknown }) {
    // Secrets never leave in a message: URL credentials, configured keys (src/core/redact.ts).
    super(redactText(message), options);
    this.name = new.target.name;
  }

  /** Structured context fields (JSON-safe); subclasses add theirs. */
  get data(): Record<string, unknown> {
    return {};
  }

  toJSON(): ErrorJSON {
    return { name: this.name, code: this.code, message: this.message, data: this.data };
  }

  static isInstance(value: unknown): value is ForgeError {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[kForgeError] === true;
  }
}

/** Options of the constructor are validated up front; a bad one names itself and what to use. */
export class InvalidArgumentError extends ForgeError {
  override readonly code = "FORGE_INVALID_ARGUMENT";
  constructor(
    readonly argument: string,
    message: string,
  ) {
    super(`Invalid ${argument}: ${message}`);
  }
  override get data() {
    return { argument: this.argument };
  }
}

/**
 * A feature outside the core install needs a package the project has not installed (an optional
 * peer dependency: pg, @libsql/client, bullmq and ioredis, @modelcontextprotocol/sdk,
 * @anthropic-ai/sdk, @statelyai/inspect). One line: the feature, the packages, the command.
 */
export class MissingPackageError extends ForgeError {
  override readonly code = "FORGE_MISSING_PACKAGE";
  constructor(
    readonly feature: string,
    readonly packages: readonly string[],
  ) {
    const named = packages.map((p) => `"${p}"`);
    const list = named.length === 1 ? `the package ${named[0]}` : `the packages ${named.slice(0, -1).join(", ")} and ${named.at(-1)}`;
    super(`${feature} needs ${list}: npm install ${packages.join(" ")}`);
  }
  override get data() {
    return { feature: this.feature, packages: [...this.packages] };
  }
}
