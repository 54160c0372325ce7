import { cloneJson, isPlainObject, setOwn, type JsonObject } from './json-values.js';

/**
 * RFC 7386 JSON merge patch: mappings merge key by key, `null` deletes a key, anything else
 * replaces. Returns a new value sharing nothing with either argument (the patch usually comes from
 * a frozen rule action; the result becomes a mutable payload). Inputs are never mutated.
 */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return cloneJson(patch);
  return mergeInto(cloneJson(target), patch);
}

/** Merges `patch` into `owned`, a private copy that may be modified in place. */
function mergeInto(owned: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return cloneJson(patch);
  const result: JsonObject = isPlainObject(owned) ? owned : {};
  for (const key of Object.keys(patch)) {
    const value = patch[key];
    if (value === null) delete result[key];
    else setOwn(result, key, mergeInto(Object.hasOwn(result, key) ? result[key] : undefined, value));
  }
  return result;
}
