import { ActionInput, BatchInput, BatchResponse, DispatchOutcome, DispatchQuery, ErrorBody } from '@sluice/core';
import type { Gateway } from '@sluice/gateway';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { requestSchema, responseSchema } from '../json-schema.js';

const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

/** A valid W3C traceparent header, else undefined (invalid ones are ignored, per the W3C spec). */
export function traceparentOf(request: FastifyRequest): string | undefined {
  const value = request.headers.traceparent;
  return typeof value === 'string' && TRACEPARENT.test(value) ? value : undefined;
}

const errorResponses = { 400: responseSchema(ErrorBody), 413: responseSchema(ErrorBody), 415: responseSchema(ErrorBody) };
const query = requestSchema(DispatchQuery);

export async function dispatchRoutes(app: FastifyInstance, opts: { gateway: Gateway }): Promise<void> {
  const { gateway } = opts;

  app.post<{ Body: ActionInput; Querystring: { dry_run: boolean } }>(
    '/v1/dispatch',
    {
      schema: {
        tags: ['dispatch'],
        summary: 'Dispatch one action',
        description: 'Runs the action through the pipeline. Every outcome (including failed) is HTTP 200.',
        querystring: query,
        body: requestSchema(ActionInput),
        response: { 200: responseSchema(DispatchOutcome), ...errorResponses },
      },
    },
    async (request) => gateway.dispatch(request.body, { dryRun: request.query.dry_run, traceparent: traceparentOf(request) }),
  );

  app.post<{ Body: BatchInput; Querystring: { dry_run: boolean } }>(
    '/v1/dispatch/batch',
    {
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
    async (request) => ({
      results: await gateway.dispatchBatch(request.body.actions, { dryRun: request.query.dry_run, traceparent: traceparentOf(request) }),
    }),
  );
}
