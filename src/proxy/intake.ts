/**
 * A request's intake: the body parsed, the dialect's checks, the tool definitions. For a large
 * body (thousands of tools) each stage runs as its own turn of the event loop, and the tool
 * definitions a few hundred at a time, so one such request never holds every other stream and
 * `/health` for the sum of them (issue 46); a small body runs straight through.
 */
import type { Dialect } from "../proxy-request/http-error.js";
import { prepareToolDefs } from "../proxy-request/request-tools.js";
import { frontDoor, type FrontDoor } from "./front-door.js";
import { parseJsonObject } from "./request-body.js";

/** Above this many characters a body is taken in turns. */
export const LARGE_BODY_CHARS = 64 * 1024;

/** Let whatever else is ready run before going on. */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * The front door for `text` in `dialect`, its tool schemas checked (a malformed one is the
 * caller's 400, before the backend is asked).
 *
 * @example
 * const door = await intake('{"messages":[{"role":"user","content":"hi"}]}', "openai");
 */
export async function intake(text: string, dialect: Dialect): Promise<FrontDoor> {
  const large = text.length > LARGE_BODY_CHARS;
  const body = parseJsonObject(text);
  if (large) await nextTurn();
  const door = frontDoor(dialect, body);
  if (large) await nextTurn();
  await prepareToolDefs(door.request.tools, large ? nextTurn : undefined);
  return door;
}
