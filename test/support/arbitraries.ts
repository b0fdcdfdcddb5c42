/** Shared fast-check arbitraries. */
import fc from "fast-check";

/**
 * JSON values as they survive a JSON round trip: fc.jsonValue() may produce -0, which
 * JSON.stringify writes as 0, so equality after serialization would fail for a non-bug.
 */
export const jsonValue = (constraints: Parameters<typeof fc.jsonValue>[0] = {}): fc.Arbitrary<unknown> =>
  fc.jsonValue(constraints).map((v) => JSON.parse(JSON.stringify(v)) as unknown);
