import { errors, type SluiceError } from '@sluice/core';

/**
 * A grant names what a caller may touch. `*` is a wildcard in each dimension. Tenants are
 * hierarchical: a grant on `acme` covers `acme` and `acme.<anything>` (the dot is required, so
 * not `acme-eu` or `acmecorp`); a grant on `acme.eu` covers neither `acme` nor `acme.us`.
 */
export interface Grant {
  tenants: string[];
  namespaces: string[];
  /** `['*']` when omitted in the credentials file. */
  providers: string[];
  actions: string[];
}

/** The four attributes of an action that grants are checked against. */
export interface ActionTuple {
  namespace: string;
  tenant: string;
  provider: string;
  action_type: string;
}

/** Reads and lists check only tenant (and namespace when the resource has one). */
export interface ScopeTuple {
  namespace?: string;
  tenant: string;
}

/** Anything with grants: a Caller, or a test double. */
export interface HasGrants {
  grants: readonly Grant[];
}

const WILDCARD = '*';

export function wildcardGrant(): Grant {
  return { tenants: [WILDCARD], namespaces: [WILDCARD], providers: [WILDCARD], actions: [WILDCARD] };
}

export function tenantCovered(pattern: string, tenant: string): boolean {
  return pattern === WILDCARD || tenant === pattern || tenant.startsWith(`${pattern}.`);
}

function exactOrWildcard(patterns: readonly string[], value: string): boolean {
  return patterns.includes(WILDCARD) || patterns.includes(value);
}

function grantCoversScope(grant: Grant, scope: ScopeTuple): boolean {
  if (!grant.tenants.some((p) => tenantCovered(p, scope.tenant))) return false;
  return scope.namespace === undefined || exactOrWildcard(grant.namespaces, scope.namespace);
}

export function grantCovers(grant: Grant, tuple: ActionTuple): boolean {
  return grantCoversScope(grant, tuple) && exactOrWildcard(grant.providers, tuple.provider) && exactOrWildcard(grant.actions, tuple.action_type);
}

/** At least one grant must match all four dimensions (dimensions are not mixed across grants). */
export function callerCovers(caller: HasGrants, tuple: ActionTuple): boolean {
  return caller.grants.some((g) => grantCovers(g, tuple));
}

/** Tenant (and namespace when given) only: for reads and lists, which have no provider/action. */
export function callerCoversScope(caller: HasGrants, scope: ScopeTuple): boolean {
  return caller.grants.some((g) => grantCoversScope(g, scope));
}

export interface CallerScope {
  /** Some grant covers every tenant (`*`); namespaces may still be limited. */
  wildcard: boolean;
  /** Every distinct tenant pattern across the grants (`['*']` when wildcard). */
  tenantPatterns: string[];
  /** Set when every grant names exactly one tenant pattern and it is the same (not `*`) one. */
  singleTenant: string | null;
}

/** What list endpoints need to auto-scope (tenant filter) or filter (stream) for a caller. */
export function callerScope(caller: HasGrants): CallerScope {
  const patterns = [...new Set(caller.grants.flatMap((g) => g.tenants))];
  const wildcard = patterns.includes(WILDCARD);
  const everyGrantSingle = caller.grants.length > 0 && caller.grants.every((g) => new Set(g.tenants).size === 1);
  const only = patterns[0];
  const singleTenant = !wildcard && everyGrantSingle && patterns.length === 1 && only !== undefined ? only : null;
  return { wildcard, tenantPatterns: wildcard ? [WILDCARD] : patterns, singleTenant };
}

/** `tenant=T, namespace=N, provider=P, action=A` (only the parts given). */
export function describeTuple(tuple: Partial<ActionTuple>): string {
  const parts: string[] = [`tenant=${tuple.tenant ?? '?'}`];
  if (tuple.namespace !== undefined) parts.push(`namespace=${tuple.namespace}`);
  if (tuple.provider !== undefined) parts.push(`provider=${tuple.provider}`);
  if (tuple.action_type !== undefined) parts.push(`action=${tuple.action_type}`);
  return parts.join(', ');
}

/** The 403 for a grant mismatch: `forbidden: no grant covers tenant=T, namespace=N, ...`. */
export function noGrantCovers(tuple: Partial<ActionTuple>): SluiceError {
  return errors.forbidden(`forbidden: no grant covers ${describeTuple(tuple)}`);
}

/**
 * For a record found by its id alone: throws `notFound` unless some grant covers the record's
 * tenant (and namespace). A 403 would tell the caller that the id exists in a tenant it cannot see.
 */
export function assertVisibleOrNotFound(caller: HasGrants, scope: ScopeTuple, notFound: () => SluiceError): void {
  if (!callerCoversScope(caller, scope)) throw notFound();
}

/**
 * For a record holding an action's payload, found by its id alone: throws `notFound` unless some
 * grant covers its whole tuple, as reading it by id would (a 403 would tell the caller that it
 * exists, and which provider and action type it holds).
 */
export function assertCoversOrNotFound(caller: HasGrants, tuple: ActionTuple, notFound: () => SluiceError): void {
  if (!callerCovers(caller, tuple)) throw notFound();
}

/** Throws 403 unless some grant covers the full tuple. */
export function assertCallerCovers(caller: HasGrants, tuple: ActionTuple): void {
  if (!callerCovers(caller, tuple)) throw noGrantCovers(tuple);
}

/** Throws 403 unless some grant covers the tenant (and namespace). */
export function assertCallerCoversScope(caller: HasGrants, scope: ScopeTuple): void {
  if (!callerCoversScope(caller, scope)) throw noGrantCovers(scope);
}
