/**
 * A flag that names a JSON file (`--policy`, `--vars`): its parsed value, or a bad-flag error
 * (exit 2) saying whether the file could not be read or is not JSON.
 */
import { readFileSync } from "node:fs";
import { InvalidArgumentError } from "../core/errors.js";

/** @example const value = jsonFileFlag("--vars", "vars.json"); */
export function jsonFileFlag(flag: string, file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new InvalidArgumentError(flag, `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new InvalidArgumentError(flag, `${file} is not JSON: ${(error as Error).message}`);
  }
}
