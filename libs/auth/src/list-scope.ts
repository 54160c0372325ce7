import { callerCovers, callerCoversScope, callerScope, noGrantCovers, type ActionTuple, type HasGrants, type ScopeTuple } from './grants.js';

/**
 * The tenant a list or read endpoint filters on for this caller: the tenant the request names
 * (403 unless a grant covers it), else a single-tenant caller's own tenant, else none — and
 * then the results are filtered with `visibleTo`.
 */
export function tenantFilterFor(caller: HasGrants, requested: { tenant?: string | undefined; namespace?: string | undefined }): string | undefined {
  if (requested.tenant !== undefined) {
    const scope: ScopeTuple = requested.namespace === undefined ? { tenant: requested.tenant } : { tenant: requested.tenant, namespace: requested.namespace };
    if (!callerCoversScope(caller, scope)) throw noGrantCovers(scope);
    return requested.tenant;
  }
  return callerScope(caller).singleTenant ?? undefined;
}

/** Whether a record with this namespace and tenant may be shown to the caller. */
export function visibleTo(caller: HasGrants, record: ScopeTuple): boolean {
  return callerCoversScope(caller, record);
}

// `*` in a dimension is covered only by a grant that is `*` there.
const EVERY_SCOPE = { tenant: '*', namespace: '*' } as const satisfies ScopeTuple;
const EVERY_ACTION: ActionTuple = { ...EVERY_SCOPE, provider: '*', action_type: '*' };

/** True when some grant covers every tenant and namespace: list queries then need no per-record filter. */
export function seesEverything(caller: HasGrants): boolean {
  return callerCoversScope(caller, EVERY_SCOPE);
}

/**
 * The filter of a list of records that are each one action (audit records): a record is listed
 * only when reading it by id would be allowed, its provider and action type included. Undefined
 * when some grant covers every action.
 */
export function actionRecordFilter(caller: HasGrants): ((record: ActionTuple) => boolean) | undefined {
  if (callerCovers(caller, EVERY_ACTION)) return undefined;
  return (record) => callerCovers(caller, record);
}
