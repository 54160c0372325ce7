/** Helpers over JSON-shaped values (what payloads, metadata and rule operands are). */

export type JsonObject = Record<string, unknown>;

/** A plain mapping (not an array, not null, not a class instance such as Date). */
export function isPlainObject(value: unknown): value is JsonObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * Structural equality of JSON values. Numbers compare by value (1 and 1.0 are the same JS number),
 * types never coerce ("1" is not 1), object key order is irrelevant. Allocation-free.
 */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const objA = a as JsonObject;
  const objB = b as JsonObject;
  let count = 0;
  for (const key in objA) {
    if (!Object.hasOwn(objA, key)) continue;
    if (!Object.hasOwn(objB, key) || !deepEqual(objA[key], objB[key])) return false;
    count++;
  }
  for (const key in objB) if (Object.hasOwn(objB, key)) count--;
  return count === 0;
}

/**
 * Sets an own data property even for the key "__proto__" (plain assignment would replace the
 * prototype instead: JSON.parse yields such keys as ordinary data).
 */
export function setOwn(target: JsonObject, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/** A deep copy of a JSON value (plain objects and arrays copied, leaves shared). */
export function cloneJson<T>(value: T): T {
  if (Array.isArray(value)) return value.map((v: unknown) => cloneJson(v)) as T;
  if (isPlainObject(value)) {
    const out: JsonObject = {};
    for (const key of Object.keys(value)) setOwn(out, key, cloneJson(value[key]));
    return out as T;
  }
  return value;
}

/** Freezes a JSON value in place, recursively (compiled rules share their actions across evaluations). */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as JsonObject)[key]);
  }
  return value;
}

/** Operands and action values may nest this deep; deeper input is refused before any recursive walk. */
export const MAX_VALUE_DEPTH = 64;

/** True when `value` nests lists/mappings deeper than `max` levels (stops looking at the limit). */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (max === 0) return true;
  for (const child of Object.values(value)) if (nestsDeeperThan(child, max - 1)) return true;
  return false;
}
