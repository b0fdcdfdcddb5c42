/**
 * The visualizer's one HTTP error: a status, a stable code and a message; `extra` fields (a
 * decision's `problem`, a lease's `expiresInMs`) go into the body beside them. The app's error
 * handler renders it as `{ error: { code, message, ...extra } }`.
 */
export class HttpProblem extends Error {
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 409 | 413 | 422 | 500,
    readonly code: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}
