import { errors } from '@sluice/core';
import { ALERTMANAGER_API } from '@sluice/http';
import type { FastifyInstance, FastifyRequest, preValidationHookHandler } from 'fastify';

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** No parameters at all: a write that takes its input from the body says so of a misplaced filter. */
const NO_QUERY = { type: 'object', properties: {}, additionalProperties: false } as const;

function isEmptyBody(body: unknown): boolean {
  return body === undefined || body === null || body === '' || (typeof body === 'object' && !Array.isArray(body) && Object.keys(body).length === 0);
}

/** Refuses a body other than `{}`, saying where the parameters go when the route takes any. */
function bodyRefusal(message: string): preValidationHookHandler {
  return (request: FastifyRequest, _reply, done) => {
    if (isEmptyBody(request.body)) return done();
    done(errors.validation([{ path: 'body', message }]));
  };
}
const refuseBodyForQuery = bodyRefusal('this operation takes no body; its parameters go in the query string');
const refuseBody = bodyRefusal('this operation takes no body');

/** Whether a query schema names any parameter. */
function namesParameters(schema: unknown): boolean {
  const properties = (schema as { properties?: object } | undefined)?.properties;
  return properties !== undefined && Object.keys(properties).length > 0;
}

/** A query schema that also refuses parameters it does not name. */
function closed(schema: unknown): unknown {
  if (typeof schema !== 'object' || schema === null || 'additionalProperties' in schema) return schema;
  return { ...schema, additionalProperties: false };
}

/** Probes and scrapes: they filter nothing, and a checker's cache-busting `?_=…` must not read as down. */
const OPS_READS = new Set(['/health', '/ready', '/metrics', '/metrics/prometheus']);

/**
 * Input in the wrong place or misspelt is refused, not ignored: a bulk replay whose filters came
 * in a body replayed the newest records of every tenant, a drain whose filters came in the query
 * string drained the whole queue, `?dryRun=true` executed the action, and `?tenat=acme` listed
 * every tenant's records. Every route refuses query parameters its schema does not name (400
 * VALIDATION_FAILED; a route that names no query string takes none), and a write that names no
 * body refuses a body other than `{}`. Registered before the routes.
 */
export function installStrictInputs(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    if (route.schema === undefined || route.schema.hide === true) return;
    if (![route.method].flat().some((m) => WRITES.has(m))) {
      // A read that names no query string takes none: `GET /v1/rules?limit=1` answered every rule, `/v1/dlq/stats?tenant=x` every tenant's.
      if (!route.url.startsWith(ALERTMANAGER_API) && !OPS_READS.has(route.url))
        route.schema = { ...route.schema, querystring: route.schema.querystring === undefined ? NO_QUERY : closed(route.schema.querystring) };
      return;
    }
    route.schema = { ...route.schema, querystring: route.schema.querystring === undefined ? NO_QUERY : closed(route.schema.querystring) };
    if (route.schema.body === undefined) {
      const existing = route.preValidation === undefined ? [] : [route.preValidation].flat();
      route.preValidation = [...existing, namesParameters(route.schema.querystring) ? refuseBodyForQuery : refuseBody];
    }
  });
}
