import {
  ErrorBody,
  RecurringAction,
  RecurringCreated,
  RecurringCreateInput,
  RecurringIdParams,
  RecurringList,
  RecurringListQuery,
  RecurringRequiredScopeQuery,
  RecurringScopeBody,
  RecurringScopeQuery,
  RecurringUpdateInput,
  errors,
} from '@sluice/core';
import { resolveScope, type RecurringScope, type RecurringService } from '@sluice/gateway';
import { assertCallerCovers, assertCallerCoversScope, assertCoversOrNotFound, callerCovers, type Caller } from '@sluice/auth';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { requestSchema, responseSchema, noContent } from '@sluice/http';
import { callerOf } from '../plugins/access-control.js';

const tags = ['recurring'];
const error = responseSchema(ErrorBody);
const params = requestSchema(RecurringIdParams);
const detail = responseSchema(RecurringAction);
// A recurring action dispatches in the future: writing one needs what dispatching needs.
const write = { access: 'dispatch' } as const;
const read = { access: 'read' } as const;

type IdRoute = { Params: { id: string } };

/** The caller may use the pair at all (403 before a lookup, so existence does not leak). */
function scopeOf(request: FastifyRequest, query: RecurringScopeQuery | undefined, body: RecurringScopeQuery | undefined): RecurringScope {
  const scope = resolveScope(query, body);
  assertCallerCoversScope(callerOf(request), scope);
  return scope;
}

/**
 * The stored action of the id, when a grant covers its whole template: it holds a payload, so
 * anything else reads as unknown (404), for a read and a change alike, as an audit record does.
 */
async function coveredAction(recurring: RecurringService, caller: Caller, scope: RecurringScope, id: string): Promise<RecurringAction> {
  const found = await recurring.get(scope, id);
  assertCoversOrNotFound(caller, found, () => errors.notFound('recurring action', id));
  return found;
}

export async function recurringRoutes(app: FastifyInstance, opts: { recurring: RecurringService }): Promise<void> {
  const { recurring } = opts;

  app.post<{ Body: RecurringCreateInput; Querystring: RecurringScopeQuery }>(
    '/v1/recurring',
    {
      config: write,
      schema: {
        tags,
        summary: 'Create a recurring action: dispatch the template on a cron schedule in a time zone',
        description:
          'namespace and tenant go in the body (or the query). 400 for an invalid cron expression or time zone, or a missing field; 409 when the pair has background.max_recurring_actions_per_tenant.',
        querystring: requestSchema(RecurringScopeQuery),
        body: requestSchema(RecurringCreateInput),
        response: { 201: responseSchema(RecurringCreated), 400: error, 403: error, 409: error },
      },
    },
    async (request, reply) => {
      const scope = scopeOf(request, request.query, request.body);
      // A template the caller names must be covered as dispatching it would be (403).
      assertCallerCovers(callerOf(request), { ...scope, provider: request.body.provider, action_type: request.body.action_type });
      const created = await recurring.create(request.body, scope);
      // A create that would never fire is refused (400), so a new action always has a next execution.
      if (created.next_execution === null) throw errors.internal(new Error(`recurring action ${created.id} created without a next execution`));
      const body: RecurringCreated = {
        recurring_id: created.id,
        next_execution: created.next_execution,
        cron_expr: created.cron_expr,
        timezone: created.timezone,
        enabled: created.enabled,
      };
      return reply.status(201).send(body);
    },
  );

  app.get<{ Querystring: RecurringListQuery }>(
    '/v1/recurring',
    {
      config: read,
      schema: {
        tags,
        summary: "List a pair's recurring actions (creation order)",
        querystring: requestSchema(RecurringListQuery),
        response: { 200: responseSchema(RecurringList), 400: error },
      },
    },
    async (request) => {
      const caller = callerOf(request);
      assertCallerCoversScope(caller, request.query);
      // A summary names its template's provider and action type: only those a grant covers, as by id.
      return recurring.list(request.query, (action) => callerCovers(caller, action));
    },
  );

  app.get<IdRoute & { Querystring: RecurringRequiredScopeQuery }>(
    '/v1/recurring/:id',
    {
      config: read,
      schema: {
        tags,
        summary: 'One recurring action',
        params,
        querystring: requestSchema(RecurringRequiredScopeQuery),
        response: { 200: detail, 400: error, 404: error },
      },
    },
    async (request) => coveredAction(recurring, callerOf(request), scopeOf(request, request.query, undefined), request.params.id),
  );

  app.put<IdRoute & { Querystring: RecurringScopeQuery; Body: RecurringUpdateInput }>(
    '/v1/recurring/:id',
    {
      config: write,
      schema: {
        tags,
        summary: 'Change a recurring action (partial; null clears an optional field)',
        description: 'A change of cron_expr, timezone, end_date or max_executions recomputes next_execution from now.',
        params,
        querystring: requestSchema(RecurringScopeQuery),
        body: requestSchema(RecurringUpdateInput),
        response: { 200: detail, 400: error, 404: error },
      },
    },
    async (request) => {
      const scope = scopeOf(request, request.query, request.body);
      const caller = callerOf(request);
      const current = await coveredAction(recurring, caller, scope, request.params.id);
      // The template as changed is named by the caller: covered as dispatching it would be (403).
      assertCallerCovers(caller, { ...current, ...definedTuple(request.body) });
      return recurring.update(scope, request.params.id, request.body);
    },
  );

  app.delete<IdRoute & { Querystring: RecurringRequiredScopeQuery }>(
    '/v1/recurring/:id',
    {
      config: write,
      schema: {
        tags,
        summary: 'Delete a recurring action',
        params,
        querystring: requestSchema(RecurringRequiredScopeQuery),
        response: { 204: noContent, 400: error, 404: error },
      },
    },
    async (request, reply) => {
      const scope = scopeOf(request, request.query, undefined);
      await coveredAction(recurring, callerOf(request), scope, request.params.id);
      await recurring.delete(scope, request.params.id);
      return reply.status(204).send();
    },
  );

  for (const op of ['pause', 'resume'] as const) {
    // An optional JSON body may carry the scope instead (the reference SDKs send one).
    app.post<IdRoute & { Querystring: RecurringScopeQuery; Body: RecurringScopeBody | undefined }>(
      `/v1/recurring/:id/${op}`,
      {
        config: write,
        schema: {
          tags,
          summary: op === 'pause' ? 'Pause: no executions until resumed' : 'Resume: the next execution is recomputed from now',
          description: `namespace and tenant in the query (or a JSON body {namespace, tenant}). 409 when already ${op === 'pause' ? 'paused' : 'active'}.`,
          params,
          querystring: requestSchema(RecurringScopeQuery),
          body: requestSchema(RecurringScopeBody),
          response: { 200: detail, 400: error, 404: error, 409: error },
        },
      },
      async (request) => {
        const scope = scopeOf(request, request.query, request.body);
        await coveredAction(recurring, callerOf(request), scope, request.params.id);
        return op === 'pause' ? recurring.pause(scope, request.params.id) : recurring.resume(scope, request.params.id);
      },
    );
  }
}

/** The tuple parts a patch changes. */
function definedTuple(patch: RecurringUpdateInput): { provider?: string; action_type?: string } {
  return {
    ...(patch.provider !== undefined ? { provider: patch.provider } : {}),
    ...(patch.action_type !== undefined ? { action_type: patch.action_type } : {}),
  };
}
