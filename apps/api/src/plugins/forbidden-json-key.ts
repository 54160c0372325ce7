/*
 * Fastify's JSON parser refuses a body holding a `__proto__` key, or a `constructor` object with a
 * `prototype` key (prototype poisoning: a later merge of such an object could change every
 * object's prototype). It says only that the body "is not valid JSON", which is untrue and names
 * nothing; this finds the key, so the 400 can say which one and where.
 */

/** The dotted path of the first forbidden key of a parsed body, or null when it holds none. */
export function forbiddenKeyPath(value: unknown, path = ''): string | null {
  if (value === null || typeof value !== 'object') return null;
  const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
  for (const [key, child] of entries) {
    const at = path === '' ? key : `${path}.${key}`;
    if (!Array.isArray(value)) {
      if (key === '__proto__') return at;
      if (key === 'constructor' && child !== null && typeof child === 'object' && Object.hasOwn(child, 'prototype')) return `${at}.prototype`;
    }
    const found = forbiddenKeyPath(child, at);
    if (found !== null) return found;
  }
  return null;
}
