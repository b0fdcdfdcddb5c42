/**
 * Loop-break counts (canonical call key → times executed this run) as a persistent hash trie
 * of plain JSON objects. The flat record it replaces had to be copied whole on every batch, so
 * each iteration cost as much as the run's count of distinct calls; here a batch copies one
 * root-to-leaf path, at most 16 entries per node and log₁₆(distinct calls) nodes deep.
 *
 * The trie is immutable (an update returns a new root sharing every untouched node), so
 * earlier machine snapshots never change, and it is plain JSON, so snapshots persist it as is.
 * Its shape depends only on the set of keys, never on insertion order.
 */
import { callKey } from "../guardrails/loop-break.js";

/** Up to {@link LEAF_SIZE} keys with their counts. */
export interface CallCountLeaf {
  readonly counts: Readonly<Record<string, number>>;
}

/** Sixteen-way branch: hex digit of the key's hash at this depth → subtrie. */
export interface CallCountBranch {
  readonly slots: Readonly<Record<string, CallCountTrie>>;
}

export type CallCountTrie = CallCountLeaf | CallCountBranch;

/** A leaf holding more keys than this splits into a branch (unless the hash is used up). */
export const LEAF_SIZE = 16;
const BITS = 4;
const HASH_BITS = 32;
const DIGITS = "0123456789abcdef";

export const EMPTY_CALL_COUNTS: CallCountTrie = Object.freeze({ counts: Object.freeze({}) });

/** 32-bit FNV-1a of the key: which slot the key takes at each depth. */
export function keyHash(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

const slotOf = (hash: number, shift: number): string => DIGITS[(hash >>> shift) & 15]!;
const isBranch = (node: CallCountTrie): node is CallCountBranch => "slots" in node;
const own = (record: Readonly<Record<string, number>>, key: string): number => (Object.hasOwn(record, key) ? record[key]! : 0);

/**
 * How often the call with this key ran.
 *
 * @example
 * callCount(addCallKeys(EMPTY_CALL_COUNTS, ["a:{}", "a:{}"]), "a:{}"); // 2
 */
export function callCount(trie: CallCountTrie, key: string): number {
  const hash = keyHash(key);
  let node = trie;
  for (let shift = 0; isBranch(node); shift += BITS) {
    const next = node.slots[slotOf(hash, shift)];
    if (next === undefined) return 0;
    node = next;
  }
  return own(node.counts, key);
}

/**
 * The counts of just these keys, as the flat record `findRepeatViolations` reads: a batch
 * looks up its own calls instead of copying the run's record.
 */
export function countsOf(trie: CallCountTrie, keys: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  // Call keys always hold a ":" (`callKey`), so none of them is "__proto__".
  for (const key of keys) if (!Object.hasOwn(out, key)) out[key] = callCount(trie, key);
  return out;
}

/** A new trie with one more run of each key (repeats count repeatedly); the input is not modified. */
export function addCallKeys(trie: CallCountTrie, keys: readonly string[]): CallCountTrie {
  let next = trie;
  for (const key of keys) next = increment(next, key, keyHash(key), 0, 1);
  return next;
}

/**
 * @example
 * addCalls(EMPTY_CALL_COUNTS, [{ tool: "a", args: { x: 1 } }]); // one more run of a({ x: 1 })
 */
export function addCalls(trie: CallCountTrie, executed: readonly { tool: string; args: unknown }[]): CallCountTrie {
  return addCallKeys(trie, callKeysOf(executed));
}

/**
 * `callKey` of each call. A call object of the machine context never changes, and a batch's
 * calls are keyed twice (the loop-break check, then the count when the batch starts): each
 * object's key is rendered once.
 */
export function callKeysOf(calls: readonly { tool: string; args: unknown }[]): string[] {
  return calls.map((call) => {
    let key = keyOfCall.get(call);
    if (key === undefined) {
      key = callKey(call.tool, call.args);
      keyOfCall.set(call, key);
    }
    return key;
  });
}

const keyOfCall = new WeakMap<object, string>();

function increment(node: CallCountTrie, key: string, hash: number, shift: number, by: number): CallCountTrie {
  if (isBranch(node)) {
    const slot = slotOf(hash, shift);
    const child = node.slots[slot] ?? EMPTY_CALL_COUNTS;
    return { slots: { ...node.slots, [slot]: increment(child, key, hash, shift + BITS, by) } };
  }
  const had = Object.hasOwn(node.counts, key);
  const counts = { ...node.counts, [key]: own(node.counts, key) + by };
  if (had || shift >= HASH_BITS || Object.keys(counts).length <= LEAF_SIZE) return { counts };
  return split(counts, shift);
}

/** A leaf that outgrew LEAF_SIZE as a branch over the next hash digit (recursively). */
function split(counts: Readonly<Record<string, number>>, shift: number): CallCountTrie {
  if (shift >= HASH_BITS || Object.keys(counts).length <= LEAF_SIZE) return { counts };
  const groups: Record<string, Record<string, number>> = {};
  for (const [key, n] of Object.entries(counts)) {
    const slot = slotOf(keyHash(key), shift);
    groups[slot] = { ...groups[slot], [key]: n };
  }
  const slots: Record<string, CallCountTrie> = {};
  for (const [slot, group] of Object.entries(groups)) slots[slot] = split(group, shift + BITS);
  return { slots };
}

/** Every key with its count, in no particular order. */
export function callCountEntries(trie: CallCountTrie): [string, number][] {
  const out: [string, number][] = [];
  const stack: CallCountTrie[] = [trie];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (isBranch(node)) stack.push(...Object.values(node.slots));
    else out.push(...Object.entries(node.counts));
  }
  return out;
}

/**
 * The trie holding exactly these counts, with every key where lookups will look for it. Used
 * on restore: a snapshot is outside input, and a hand-edited trie would otherwise answer 0 for
 * keys sitting in the wrong slot.
 */
export function callCountsFrom(entries: Iterable<readonly [string, number]>): CallCountTrie {
  const totals = new Map<string, number>();
  for (const [key, n] of entries) if (n > 0) totals.set(key, (totals.get(key) ?? 0) + n);
  // Built in one pass: a node is a branch exactly when more than LEAF_SIZE keys share its
  // prefix, as after adding the keys one by one. (fromEntries keeps any key an own property.)
  return totals.size === 0 ? EMPTY_CALL_COUNTS : split(Object.fromEntries(totals), 0);
}
