/**
 * Visits a tenant, then each parent (`acme.eu.west`, `acme.eu`, `acme`), until `visit` returns
 * something. Never a sibling: `acme-eu` is not under `acme` (the hierarchy is dotted, as in grants).
 */
export function firstInTenantLine<R>(tenant: string, visit: (scope: string) => R | undefined): R | undefined {
  for (let scope = tenant; ; ) {
    const found = visit(scope);
    if (found !== undefined) return found;
    const dot = scope.lastIndexOf('.');
    if (dot <= 0) return undefined;
    scope = scope.slice(0, dot);
  }
}

/** The map's value for `key`, made and stored first when there is none (building per-scope snapshots). */
export function getOrAdd<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = make();
    map.set(key, value);
  }
  return value;
}
