import { ActionInput, BatchInput, BatchResponse, DispatchOutcome, DispatchQuery, ErrorBody } from '@sluice/core';
import { callerCovers, noGrantCovers, type Caller } from '@sluice/auth';
import type { DispatchOptions, Gateway } from '@sluice/gateway';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { requestSchema, responseSchema } from '@sluice/http';
import { callerOf } from '../plugins/access-control.js';
import type { RateLimiter } from '../rate-limiter.js';
import { traceparentOf } from '../trace-header.js';

/** The grant check of one action (throws 403) and the options its dispatch runs with. */
function grant(request: FastifyRequest, action: ActionInput): DispatchOptions {
  const caller: Caller = callerOf(request);
  if (!callerCovers(caller, action)) throw noGrantCovers(action);
  return optionsOf(request, caller);
}

function optionsOf(request: FastifyRequest, caller: Caller): DispatchOptions {
  return {
    dryRun: (request.query as { dry_run: boolean }).dry_run,
    traceparent: traceparentOf(request),
    caller: { id: caller.id, method: caller.method },
    // The request span (with tracing on) is the dispatch's, or the batch's.
    inRequestSpan: true,
  };
}

/**
 * Grants, then the tenant rate limits, for every action before any runs: one action out of the
 * caller's scope rejects the whole batch with 403, and a refused request consumes nothing. A dry
 * run dispatches nothing, so it counts against no tenant's limit (the caller's still applies).
 */
export async function admit(request: FastifyRequest, actions: readonly ActionInput[], rateLimiter: RateLimiter): Promise<DispatchOptions> {
  const caller: Caller = callerOf(request);
  const outside = actions.find((a) => !callerCovers(caller, a));
  if (outside) throw noGrantCovers(outside);
  const options = optionsOf(request, caller);
  if (!options.dryRun) await rateLimiter.checkTenants(actions.map((a) => a.tenant));
  return options;
}

const error = responseSchema(ErrorBody);
// 503: STATE_UNAVAILABLE, the state backend away or full (nothing executed; Retry-After).
const errorResponses = { 400: error, 401: error, 403: error, 413: error, 415: error, 429: error, 503: error };
const config = { access: 'dispatch' } as const;
const query = requestSchema(DispatchQuery);

export async function dispatchRoutes(app: FastifyInstance, opts: { gateway: Gateway; rateLimiter: RateLimiter }): Promise<void> {
  const { gateway, rateLimiter } = opts;

  app.post<{ Body: ActionInput; Querystring: { dry_run: boolean } }>(
    '/v1/dispatch',
    {
      config,
      schema: {
        tags: ['dispatch'],
        summary: 'Dispatch one action',
        description: 'Runs the action through the pipeline. Every outcome (including failed) is HTTP 200.',
        querystring: query,
        body: requestSchema(ActionInput),
        response: { 200: responseSchema(DispatchOutcome), ...errorResponses },
      },
    },
    // admit() for one action, without its promises when rate limits are off (a sync throw is a rejection to Fastify).
    (request) => {
      const action = request.body;
      const options = grant(request, action);
      if (!rateLimiter.enabled || options.dryRun) return gateway.dispatch(action, options);
      return rateLimiter.checkTenants([action.tenant]).then(() => gateway.dispatch(action, options));
    },
  );

  app.post<{ Body: BatchInput; Querystring: { dry_run: boolean } }>(
    '/v1/dispatch/batch',
    {
      config,
      schema: {
        tags: ['dispatch'],
        summary: 'Dispatch up to 1000 actions',
        description: 'Body {actions:[...]} (a bare array is accepted too). Results come back in input order.',
        querystring: query,
        body: requestSchema(BatchInput),
        response: { 200: responseSchema(BatchResponse), ...errorResponses },
      },
      // Reference SDKs send a bare array; accept it as the `actions` list.
      preValidation: async (request) => {
        if (Array.isArray(request.body)) request.body = { actions: request.body };
      },
    },
    async (request) => ({ results: await gateway.dispatchBatch(request.body.actions, await admit(request, request.body.actions, rateLimiter)) }),
  );
}
