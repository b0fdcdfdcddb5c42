import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../src/core/errors.js";
import { FileRunStore } from "../../src/persistence/file-run-store.js";
import { PostgresRunStore } from "../../src/persistence/postgres-run-store.js";
import { SqlRunStore } from "../../src/persistence/sql-run-store.js";
import { parseStoreSpec, storeKindOf } from "../../src/persistence/store-spec.js";

const KNOWN = ["file", "libsql", "http", "https", "ws", "wss", "postgres", "postgresql"];

/** A path with no scheme: a first segment without a colon, or a leading ./, ../ or /; later segments anything. */
const plainPath = fc
  .tuple(
    fc.constantFrom("", "./", "../", "/"),
    fc.stringMatching(/^[A-Za-z0-9._ -]{1,12}$/),
    fc.array(fc.string({ minLength: 1, maxLength: 12 }).filter((s) => !s.includes("/")), { maxLength: 4 }),
  )
  .map(([lead, first, rest]) => lead + [first, ...rest].join("/"));

/** A scheme no store opens (RFC 3986 syntax, two characters or more), with anything after it. */
const unknownScheme = fc
  .tuple(fc.stringMatching(/^[A-Za-z][A-Za-z0-9+.-]{1,10}$/), fc.constantFrom("", "//", "/"), fc.string({ maxLength: 20 }))
  .filter(([scheme]) => !KNOWN.includes(scheme.toLowerCase()))
  .map(([scheme, sep, rest]) => `${scheme}:${sep}${rest}`);

describe("parseStoreSpec: one reader of store values", () => {
  it("names each accepted form", () => {
    const cases: [string, string][] = [
      ["runs", "directory"],
      ["./x", "directory"],
      ["/abs/runs", "directory"],
      ["../up", "directory"],
      ["./runs:2024", "directory"],
      ["C:\\runs", "directory"], // one letter: a drive, not a scheme
      ["file:runs.db", "libsql"],
      ["file:///tmp/runs.db", "libsql"],
      ["FILE:runs.db", "libsql"],
      ["libsql://db.example", "libsql"],
      ["http://127.0.0.1:8080", "libsql"],
      ["https://db.example", "libsql"],
      ["ws://127.0.0.1:8080", "libsql"],
      ["wss://db.example", "libsql"],
      [":memory:", "libsql"],
      ["postgres://u:p@h:5432/db", "postgres"],
      ["postgresql://h/db", "postgres"],
      ["POSTGRES://h/db", "postgres"],
    ];
    expect(cases.map(([spec]) => parseStoreSpec(spec))).toEqual(cases.map(([, kind]) => kind));
  });

  it("refuses any other scheme in one line naming --store and the accepted forms, a password masked", () => {
    for (const spec of ["mysql://x", "sqlite:/path/runs.db", "redis://127.0.0.1:6379", "postgres:db", "mongodb+srv://u:secret@h/db", "runs:2024"]) {
      const error = (() => {
        try {
          parseStoreSpec(spec);
        } catch (e) {
          return e;
        }
      })();
      expect(error, spec).toBeInstanceOf(InvalidArgumentError);
      const { message, argument } = error as InvalidArgumentError;
      expect(argument).toBe("--store");
      expect(message).not.toContain("\n");
      expect(message).toMatch(/not a run store; use a directory .*file:runs\.db.*libsql:\/\/.*postgres:\/\//);
      expect(message).not.toContain("secret");
    }
    expect(() => parseStoreSpec("", "url")).toThrow(/Invalid url: is empty/);
  });

  it("property: any plain path is a directory; any unknown scheme is refused", () => {
    fc.assert(fc.property(plainPath, (spec) => storeKindOf(spec) === "directory" && parseStoreSpec(spec) === "directory"));
    fc.assert(
      fc.property(unknownScheme, (spec) => {
        expect(storeKindOf(spec)).toBeUndefined();
        expect(() => parseStoreSpec(spec)).toThrow(InvalidArgumentError);
      }),
    );
  });

  it("the stores' own options agree: each refuses a value of another kind", () => {
    expect(() => new FileRunStore({ dir: "mysql://x" })).toThrow(/Invalid dir: "mysql:\/\/x" is a URL, not a directory/);
    expect(() => new FileRunStore({ dir: "file:runs.db" })).toThrow(InvalidArgumentError);
    expect(new FileRunStore({ dir: "./runs:2024" }).dir).toMatch(/runs:2024$/);
    expect(() => new SqlRunStore({ url: "postgres://h/db" })).toThrow(/Invalid url: expected a libSQL URL/);
    expect(() => new SqlRunStore({ url: "runs.db" })).toThrow(InvalidArgumentError);
    expect(() => new PostgresRunStore({ url: "mysql://u:secret@h/db" })).toThrow(/expected a postgres:\/\/ .*mysql:\/\/u:\*\*\*@h\/db/);
  });
});
