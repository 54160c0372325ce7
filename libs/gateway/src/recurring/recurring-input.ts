import { errors } from '@sluice/core';

export interface RecurringScope {
  namespace: string;
  tenant: string;
}

interface MaybeScope {
  namespace?: string | undefined;
  tenant?: string | undefined;
}

/**
 * The (namespace, tenant) of a request: the spec puts it in the query, the reference SDKs in
 * the JSON body. Either works; naming it in both places with different values is a 400.
 */
export function resolveScope(query: MaybeScope | undefined, body: MaybeScope | undefined): RecurringScope {
  const namespace = oneOf('namespace', query?.namespace, body?.namespace);
  const tenant = oneOf('tenant', query?.tenant, body?.tenant);
  if (namespace === undefined || tenant === undefined) {
    throw errors.badRequest('namespace and tenant are required (query or body)');
  }
  return { namespace, tenant };
}

/**
 * A field that has two accepted spellings (the spec's and the reference's): either may be given,
 * both only when they agree. `undefined` = neither given; null passes through (clears).
 */
export function aliased<T>(names: [string, string], primary: T | undefined, alias: T | undefined): T | undefined {
  if (primary !== undefined && alias !== undefined && JSON.stringify(primary) !== JSON.stringify(alias)) {
    throw errors.badRequest(`${names[0]} and ${names[1]} name the same field and disagree; send one of them`);
  }
  return primary !== undefined ? primary : alias;
}

function oneOf(name: string, fromQuery: string | undefined, fromBody: string | undefined): string | undefined {
  return aliased([`query ${name}`, `body ${name}`], fromQuery, fromBody);
}
