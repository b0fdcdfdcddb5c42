/**
 * optionalPackages: the one line for a missing optional peer, and every other failure to load
 * passed on as it is (a package that is there but broken, or its own dependency missing).
 */
import { mkdtemp, mkdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ForgeError, MissingPackageError } from "../../src/core/errors.js";
import { optionalPackages } from "../../src/core/optional-package.js";

// A directory of its own with a node_modules: Node resolves the bare names below from a module there.
let dir: string;
let importFrom: (specifier: string) => Promise<unknown>;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "forge-optional-package-"));
  const pkg = async (name: string, main: string) => {
    await mkdir(path.join(dir, "node_modules", name), { recursive: true });
    await writeFile(path.join(dir, "node_modules", name, "package.json"), JSON.stringify({ name, version: "1.0.0", type: "module", main: "index.js" }));
    await writeFile(path.join(dir, "node_modules", name, "index.js"), main);
  };
  await pkg("present-pkg", "export const answer = 42;\n");
  await pkg("needs-absent-dep", 'import "absent-dep-of-a-peer";\nexport const never = true;\n');
  await pkg("broken-pkg", 'throw new Error("broken at load");\n');
  // import() from a module inside `dir`, as a feature's module imports its peers from where it is installed.
  await writeFile(path.join(dir, "importer.mjs"), "export const load = (specifier) => import(specifier);\n");
  ({ load: importFrom } = (await import(/* @vite-ignore */ pathToFileURL(path.join(dir, "importer.mjs")).href)) as { load: (s: string) => Promise<unknown> });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("optionalPackages", () => {
  it("returns what load() gave when the packages are there", async () => {
    const mod = await optionalPackages("forge-ts/test", ["present-pkg"], () => importFrom("present-pkg"));
    expect(mod).toMatchObject({ answer: 42 });
  });

  it("turns a missing package into one line naming it and the command that installs it", async () => {
    const error = await optionalPackages("forge-ts/postgres", ["absent-peer-pkg"], () => importFrom("absent-peer-pkg")).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MissingPackageError);
    expect(ForgeError.isInstance(error)).toBe(true);
    const e = error as MissingPackageError;
    expect(e.message).toBe('forge-ts/postgres needs the package "absent-peer-pkg": npm install absent-peer-pkg');
    expect(e.message).not.toContain("\n");
    expect(e.code).toBe("FORGE_MISSING_PACKAGE");
    expect(e.toJSON().data).toEqual({ feature: "forge-ts/postgres", packages: ["absent-peer-pkg"] });
  });

  it("names every package of the feature, whichever of them is missing (a subpath names its package)", async () => {
    const error = await optionalPackages("forge-ts/queue", ["present-pkg", "absent-peer-pkg"], () =>
      Promise.all([importFrom("present-pkg"), importFrom("absent-peer-pkg/sub/path.js")]),
    ).catch((e: unknown) => e);
    expect((error as Error).message).toBe('forge-ts/queue needs the packages "present-pkg" and "absent-peer-pkg": npm install present-pkg absent-peer-pkg');
  });

  it("passes on a missing dependency of an installed package as Node reported it", async () => {
    const error = await optionalPackages("forge-ts/test", ["needs-absent-dep"], () => importFrom("needs-absent-dep")).catch((e: unknown) => e);
    expect(error).not.toBeInstanceOf(MissingPackageError);
    expect((error as { code?: unknown }).code).toBe("ERR_MODULE_NOT_FOUND");
    expect((error as Error).message).toContain("'absent-dep-of-a-peer'");
  });

  it("passes on a package that is there but fails to load", async () => {
    const error = await optionalPackages("forge-ts/test", ["broken-pkg"], () => importFrom("broken-pkg")).catch((e: unknown) => e);
    expect(error).not.toBeInstanceOf(MissingPackageError);
    expect((error as Error).message).toBe("broken at load");
  });
});
