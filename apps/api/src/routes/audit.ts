import type { AuditStore, StoreQuery } from '@sluice/audit';
import { actionRecordFilter, callerCovers, callerCoversScope, tenantFilterFor, assertCallerCoversScope, type Caller } from '@sluice/auth';
import {
  ActionIdParams,
  ActionRecordScopeQuery,
  AuditPage,
  AuditQuery,
  AuditRecord,
  AuditVerifyInput,
  AuditVerifyResult,
  BulkReplayQuery,
  BulkReplayResult,
  ComplianceStatusBody,
  ErrorBody,
  ReplayResult,
  errors,
  newId,
} from '@sluice/core';
import { replayAction, type ComplianceStatus, type Gateway } from '@sluice/gateway';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { requestSchema, responseSchema } from '@sluice/http';
import { traceparentOf } from '../trace-header.js';
import { callerOf } from '../plugins/access-control.js';
import type { RateLimiter } from '../rate-limiter.js';

const tags = ['audit'];
const error = responseSchema(ErrorBody);
const read = { access: 'read' } as const;
const dispatch = { access: 'dispatch' } as const;
const params = requestSchema(ActionIdParams);
const scopeQuery = requestSchema(ActionRecordScopeQuery);

export interface AuditRouteOptions {
  /** Null when audit is disabled: the audit routes then answer 404 `audit is not enabled`. */
  store: AuditStore | null;
  compliance: ComplianceStatus;
  gateway: Gateway;
  /** A replay is a dispatch: it counts against its tenant's request limit. */
  rateLimiter: RateLimiter;
}

type Filters = Omit<AuditQuery, 'limit' | 'offset' | 'cursor'>;

/** Time bounds in ms; 400 when from is after to. */
function window(q: { from?: string | undefined; to?: string | undefined }): { fromMs?: number; toMs?: number } {
  const fromMs = q.from === undefined ? undefined : Date.parse(q.from);
  const toMs = q.to === undefined ? undefined : Date.parse(q.to);
  if (fromMs !== undefined && toMs !== undefined && fromMs > toMs) throw errors.badRequest('from must not be after to');
  return { ...(fromMs !== undefined ? { fromMs } : {}), ...(toMs !== undefined ? { toMs } : {}) };
}

/** The caller's view of the trail: a named tenant must be granted, a single-tenant caller is scoped to its own, records are those its grants cover. */
function scopedQuery(caller: Caller, q: Filters): Omit<StoreQuery, 'limit' | 'offset'> {
  const { from: _from, to: _to, ...filters } = q;
  const tenant = tenantFilterFor(caller, q);
  const visible = actionRecordFilter(caller);
  return {
    ...filters,
    ...(tenant !== undefined ? { tenant } : {}),
    ...window(q),
    // What the caller could read by id: the provider and action type too, not the scope alone.
    ...(visible === undefined ? {} : { visible }),
  };
}

export async function auditRoutes(app: FastifyInstance, opts: AuditRouteOptions): Promise<void> {
  const { compliance, gateway } = opts;
  const store = (): AuditStore => {
    if (!opts.store) throw errors.featureNotEnabled('audit');
    return opts.store;
  };
  /** The record of an action the caller may see in full (tenant, namespace, provider, action type), in the scope it names if any. */
  const recordFor = async (caller: Caller, actionId: string, within: ActionRecordScopeQuery = {}): Promise<AuditRecord> => {
    // A tenant the caller names must be one it may see (403), as on every route that names one.
    if (within.tenant !== undefined)
      assertCallerCoversScope(caller, { tenant: within.tenant, ...(within.namespace !== undefined ? { namespace: within.namespace } : {}) });
    const named = (scope: { namespace: string; tenant: string }) =>
      (within.tenant === undefined || scope.tenant === within.tenant) && (within.namespace === undefined || scope.namespace === within.namespace);
    // Only records the caller's grants cover: another tenant's record of the same id is "not
    // found" (a 403 would say the id exists there), and cannot shadow the caller's own.
    const record = await store().get(actionId, { scope: (scope) => named(scope) && callerCoversScope(caller, scope), record: (r) => callerCovers(caller, r) });
    if (!record) throw errors.notFoundMessage(`no audit record found for action: ${actionId}`);
    return record;
  };
  const replay = async (request: FastifyRequest, caller: Caller, record: AuditRecord): Promise<ReplayResult> => {
    const newActionId = newId();
    const action = replayAction(record, newActionId);
    if (!action) throw errors.unprocessable('audit record has no stored payload (audit.store_payload was off)');
    try {
      const outcome = await gateway.dispatch(action, { caller: { id: caller.id, method: caller.method }, traceparent: traceparentOf(request) });
      return { original_action_id: record.action_id, new_action_id: newActionId, success: true, error: null, outcome: outcome.outcome };
    } catch (err) {
      request.log.error({ err, action_id: record.action_id }, 'replay dispatch failed');
      return { original_action_id: record.action_id, new_action_id: newActionId, success: false, error: 'dispatch failed', outcome: null };
    }
  };

  app.get<{ Querystring: AuditQuery }>(
    '/v1/audit',
    {
      config: read,
      schema: {
        tags,
        summary: 'Audit records, newest first',
        description: 'Every filter is an exact match; from/to bound dispatched_at. Use next_cursor for deep pages.',
        querystring: requestSchema(AuditQuery),
        response: { 200: responseSchema(AuditPage), 400: error, 403: error, 404: error },
      },
    },
    async (request) => {
      const { limit, offset, cursor, ...filters } = request.query;
      return store().query({
        ...scopedQuery(callerOf(request), filters),
        limit,
        offset,
        ...(cursor !== undefined ? { cursor } : {}),
      });
    },
  );

  app.get<{ Params: { action_id: string }; Querystring: ActionRecordScopeQuery }>(
    '/v1/audit/:action_id',
    {
      config: read,
      schema: {
        tags,
        summary: 'The most recent audit record of an action (within namespace and tenant, when given)',
        description:
          'Action ids are per tenant: a caller who sees several tenants names the one it means, else it gets the newest record of the id among them.',
        params,
        querystring: scopeQuery,
        response: { 200: responseSchema(AuditRecord), 400: error, 403: error, 404: error },
      },
    },
    async (request) => recordFor(callerOf(request), request.params.action_id, request.query),
  );

  app.post<{ Body: AuditVerifyInput }>(
    '/v1/audit/verify',
    {
      config: read,
      schema: {
        tags,
        summary: "Check a namespace and tenant's hash chain",
        body: requestSchema(AuditVerifyInput),
        response: { 200: responseSchema(AuditVerifyResult), 400: error, 403: error, 404: error },
      },
    },
    async (request) => {
      assertCallerCoversScope(callerOf(request), request.body);
      if (!compliance.hash_chain) throw errors.badRequest('hash chaining is not enabled');
      window(request.body);
      return store().verify(request.body);
    },
  );

  app.post<{ Params: { action_id: string }; Querystring: ActionRecordScopeQuery }>(
    '/v1/audit/:action_id/replay',
    {
      config: dispatch,
      schema: {
        tags,
        summary: 'Dispatch a recorded action again, with a new id and a replayed_from label',
        description: 'The record is the one GET /v1/audit/{action_id} answers with the same namespace and tenant query.',
        params,
        querystring: scopeQuery,
        response: { 200: responseSchema(ReplayResult), 403: error, 404: error, 422: error, 429: error },
      },
    },
    async (request) => {
      const caller = callerOf(request);
      const record = await recordFor(caller, request.params.action_id, request.query);
      await opts.rateLimiter.checkTenants([record.tenant]);
      return replay(request, caller, record);
    },
  );

  app.post<{ Querystring: BulkReplayQuery }>(
    '/v1/audit/replay',
    {
      config: dispatch,
      schema: {
        tags,
        summary: 'Replay the records matching the filters (query parameters); out-of-scope ones are skipped (not matched)',
        querystring: requestSchema(BulkReplayQuery),
        response: { 200: responseSchema(BulkReplayResult), 400: error, 403: error, 404: error, 429: error },
      },
    },
    async (request) => {
      const caller = callerOf(request);
      const { limit, offset, ...filters } = request.query;
      // Records the caller cannot read are not matched at all: counted as skipped, the filters made
      // an oracle of other tenants' activity (and took the page's places from the caller's own).
      const page = await store().query({ ...scopedQuery(caller, filters), limit, offset });
      const replayable = page.records.filter((r) => r.action_payload !== null);
      // Counted as one batch: over a tenant's limit, 429 and nothing replayed (as a batch dispatch).
      await opts.rateLimiter.checkTenants(replayable.map((r) => r.tenant));
      const results: ReplayResult[] = [];
      for (const record of replayable) results.push(await replay(request, caller, record));
      const skipped = page.records.length - replayable.length;
      const failed = results.filter((r) => !r.success).length;
      return { replayed: results.length - failed, failed, skipped, results };
    },
  );

  app.get(
    '/v1/compliance/status',
    { config: read, schema: { tags: ['audit'], summary: 'The compliance mode and what it turns on', response: { 200: responseSchema(ComplianceStatusBody) } } },
    async () => compliance,
  );
}
