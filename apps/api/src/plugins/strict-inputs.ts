import { errors } from '@sluice/core';
import type { FastifyInstance, FastifyRequest, preValidationHookHandler } from 'fastify';

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** No parameters at all: a write that takes its input from the body says so of a misplaced filter. */
const NO_QUERY = { type: 'object', properties: {}, additionalProperties: false } as const;

function isEmptyBody(body: unknown): boolean {
  return body === undefined || body === null || body === '' || (typeof body === 'object' && !Array.isArray(body) && Object.keys(body).length === 0);
}

const refuseBody: preValidationHookHandler = (request: FastifyRequest, _reply, done) => {
  if (isEmptyBody(request.body)) return done();
  done(errors.validation([{ path: 'body', message: 'this operation takes no body; its parameters go in the query string' }]));
};

/**
 * A write must not ignore input it was given in the wrong place: a bulk replay whose filters came
 * in a body replayed the newest records of every tenant, and a drain whose filters came in the
 * query string drained the whole queue. Every write route whose schema names no query string
 * refuses query parameters (400 VALIDATION_FAILED), and one that names no body refuses a body
 * other than `{}`. Registered before the routes.
 */
export function installStrictInputs(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    if (route.schema === undefined || route.schema.hide === true) return;
    if (![route.method].flat().some((m) => WRITES.has(m))) return;
    if (route.schema.querystring === undefined) route.schema = { ...route.schema, querystring: NO_QUERY };
    if (route.schema.body === undefined) {
      const existing = route.preValidation === undefined ? [] : [route.preValidation].flat();
      route.preValidation = [...existing, refuseBody];
    }
  });
}
