/**
 * Where no server ever listens: port 1 is below the ephemeral range, so no listen on port 0 is
 * handed it. A port found free and closed again is not that: on a busy machine another server
 * can take it at once, and the "dead" backend answers.
 */
export const REFUSED_URL = "http://127.0.0.1:1";
