import {
  ErrorBody,
  RetentionCreateInput,
  RetentionIdParams,
  RetentionList,
  RetentionListQuery,
  RetentionPolicy,
  RetentionUpdateInput,
  toRetentionSummary,
  errors,
} from '@sluice/core';
import type { RetentionRepository } from '@sluice/gateway';
import { assertCallerCoversScope, tenantFilterFor, visibleTo, assertVisibleOrNotFound } from '@sluice/auth';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { requestSchema, responseSchema, noContent } from '@sluice/http';
import { callerOf } from '../plugins/access-control.js';

const tags = ['retention'];
const error = responseSchema(ErrorBody);
const params = requestSchema(RetentionIdParams);
const policy = responseSchema(RetentionPolicy);
const write = { access: 'admin' } as const;
const read = { access: 'read' } as const;

type IdRoute = { Params: { id: string } };

/** A policy is the caller's to see (and, as admin, to change) when a grant covers its namespace and tenant. */
function readable(request: FastifyRequest, found: RetentionPolicy): RetentionPolicy {
  assertVisibleOrNotFound(callerOf(request), found, () => errors.notFound('retention policy', found.id));
  return found;
}

export async function retentionRoutes(app: FastifyInstance, opts: { retention: RetentionRepository }): Promise<void> {
  const { retention } = opts;

  app.post<{ Body: RetentionCreateInput }>(
    '/v1/retention',
    {
      config: write,
      schema: {
        tags,
        summary: 'Create the retention policy of a namespace and tenant (shared by all replicas)',
        body: requestSchema(RetentionCreateInput),
        response: { 201: policy, 400: error, 409: error },
      },
    },
    async (request, reply) => {
      assertCallerCoversScope(callerOf(request), request.body);
      return reply.status(201).send(await retention.create(request.body));
    },
  );

  app.get<{ Querystring: RetentionListQuery }>(
    '/v1/retention',
    {
      config: read,
      schema: {
        tags,
        summary: 'List retention policies',
        description: 'Entries omit state_ttl_seconds, event_ttl_seconds, description and labels; GET /v1/retention/{id} has them.',
        querystring: requestSchema(RetentionListQuery),
        response: { 200: responseSchema(RetentionList), 400: error },
      },
    },
    async (request) => {
      const caller = callerOf(request);
      // A named tenant no grant covers is a 403. Without one, every policy a grant covers is listed,
      // sub-tenants included (a single-tenant caller's tenant is not injected as an exact filter).
      const tenant = request.query.tenant === undefined ? undefined : tenantFilterFor(caller, request.query);
      const { policies, count } = retention.list({ ...request.query, tenant, visible: (p) => visibleTo(caller, p) });
      return { policies: policies.map(toRetentionSummary), count };
    },
  );

  app.get<IdRoute>(
    '/v1/retention/:id',
    { config: read, schema: { tags, summary: 'One retention policy', params, response: { 200: policy, 404: error } } },
    async (request) => readable(request, retention.get(request.params.id)),
  );

  app.put<IdRoute & { Body: RetentionUpdateInput }>(
    '/v1/retention/:id',
    {
      config: write,
      schema: {
        tags,
        summary: 'Change a retention policy (partial; null clears an optional field)',
        params,
        body: requestSchema(RetentionUpdateInput),
        response: { 200: policy, 400: error, 404: error },
      },
    },
    async (request) => {
      readable(request, retention.get(request.params.id));
      return retention.update(request.params.id, request.body);
    },
  );

  app.delete<IdRoute>(
    '/v1/retention/:id',
    {
      config: write,
      schema: { tags, summary: 'Delete a retention policy: the tenant reverts to the gateway defaults', params, response: { 204: noContent, 404: error } },
    },
    async (request, reply) => {
      readable(request, retention.get(request.params.id));
      await retention.delete(request.params.id);
      return reply.status(204).send();
    },
  );
}
