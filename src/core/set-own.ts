/**
 * Writing a key someone else chose (a model's argument name, a caller's field or tool name)
 * into an object. `obj[key] = value` goes through the prototype chain: `__proto__` there is
 * Object.prototype's setter and replaces the object's prototype instead of adding a key, and
 * on a frozen Object.prototype (a hardened runtime) `constructor` or `toString` would throw.
 * Defining the property keeps every key an ordinary own data key, as JSON.parse does for
 * `__proto__`; the validator then judges it like any other argument.
 */

/**
 * @example
 * const args: Record<string, unknown> = {};
 * setOwn(args, "__proto__", { city: "Paris" });
 * Object.getPrototypeOf(args) === Object.prototype; // true
 * Object.keys(args); // ["__proto__"]
 */
export function setOwn<TValue>(obj: Record<string, TValue>, key: string, value: TValue): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * `Object.assign(target, source)` for a source whose keys came from outside: each own
 * enumerable key of `source` is set with {@link setOwn}.
 *
 * @example
 * assignOwn(pool, JSON.parse('{"__proto__": {"x": 1}}')); // pool gains an own "__proto__" key
 */
export function assignOwn<TValue>(target: Record<string, TValue>, source: Readonly<Record<string, TValue>>): void {
  for (const key of Object.keys(source)) setOwn(target, key, source[key] as TValue);
}
