import {
  ErrorBody,
  QuotaCreateInput,
  QuotaIdParams,
  QuotaList,
  QuotaListQuery,
  QuotaPolicy,
  QuotaUpdateInput,
  QuotaUsage,
  QuotaUsageQuery,
  errors,
} from '@sluice/core';
import type { QuotaRepository } from '@sluice/gateway';
import { assertCallerCoversScope, tenantFilterFor, visibleTo, assertVisibleOrNotFound } from '@sluice/auth';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { requestSchema, responseSchema, noContent } from '@sluice/http';
import { callerOf } from '../plugins/access-control.js';

const tags = ['quotas'];
const error = responseSchema(ErrorBody);
const params = requestSchema(QuotaIdParams);
const policy = responseSchema(QuotaPolicy);
const manage = { access: 'quotas_manage' } as const;
const read = { access: 'read' } as const;

type IdRoute = { Params: { id: string } };

/** A policy is the caller's to see (and, with quotas_manage, to change) when a grant covers its namespace and tenant. */
function readable(request: FastifyRequest, policy: QuotaPolicy): QuotaPolicy {
  assertVisibleOrNotFound(callerOf(request), policy, () => errors.notFound('quota policy', policy.id));
  return policy;
}

export async function quotasRoutes(app: FastifyInstance, opts: { quotas: QuotaRepository }): Promise<void> {
  const { quotas } = opts;

  app.post<{ Body: QuotaCreateInput }>(
    '/v1/quotas',
    {
      config: manage,
      schema: {
        tags,
        summary: 'Create a quota policy (shared by all replicas)',
        body: requestSchema(QuotaCreateInput),
        response: { 201: policy, 400: error, 409: error },
      },
    },
    async (request, reply) => {
      assertCallerCoversScope(callerOf(request), request.body);
      return reply.status(201).send(await quotas.create(request.body));
    },
  );

  app.get<{ Querystring: QuotaListQuery }>(
    '/v1/quotas',
    {
      config: read,
      schema: {
        tags,
        summary: 'List quota policies (config and API)',
        querystring: requestSchema(QuotaListQuery),
        response: { 200: responseSchema(QuotaList), 400: error },
      },
    },
    async (request) => {
      const caller = callerOf(request);
      const tenant = tenantFilterFor(caller, request.query);
      return quotas.list({ ...request.query, tenant, visible: (policy) => visibleTo(caller, policy) });
    },
  );

  app.get<IdRoute>(
    '/v1/quotas/:id',
    { config: read, schema: { tags, summary: 'One quota policy', params, response: { 200: policy, 404: error } } },
    async (request) => readable(request, quotas.get(request.params.id)),
  );

  app.put<IdRoute & { Body: QuotaUpdateInput }>(
    '/v1/quotas/:id',
    {
      config: manage,
      schema: {
        tags,
        summary: 'Change an API quota policy (partial: max_actions, window, overage_behavior, enabled, description)',
        params,
        body: requestSchema(QuotaUpdateInput),
        response: { 200: policy, 400: error, 404: error, 409: error },
      },
    },
    async (request) => {
      readable(request, quotas.get(request.params.id));
      return quotas.update(request.params.id, request.body);
    },
  );

  app.delete<IdRoute>(
    '/v1/quotas/:id',
    { config: manage, schema: { tags, summary: 'Delete an API quota policy', params, response: { 204: noContent, 404: error, 409: error } } },
    async (request, reply) => {
      readable(request, quotas.get(request.params.id));
      await quotas.delete(request.params.id);
      return reply.status(204).send();
    },
  );

  app.get<IdRoute & { Querystring: QuotaUsageQuery }>(
    '/v1/quotas/:id/usage',
    {
      config: read,
      schema: {
        tags,
        summary: "Usage of a policy's current window",
        description: 'For a policy whose namespace or tenant is *, name the concrete one with ?namespace= / ?tenant= (each counts separately).',
        params,
        querystring: requestSchema(QuotaUsageQuery),
        response: { 200: responseSchema(QuotaUsage), 400: error, 404: error },
      },
    },
    async (request) => {
      // A policy of a tenant outside the grants is not found, as by GET /v1/quotas/{id}; for a `*`
      // policy, the tenant the query names is checked (403: the request names it).
      const policy = quotas.get(request.params.id);
      if (policy.tenant !== '*') {
        const scope = policy.namespace === '*' ? { tenant: policy.tenant } : { tenant: policy.tenant, namespace: policy.namespace };
        assertVisibleOrNotFound(callerOf(request), scope, () => errors.notFound('quota policy', policy.id));
      }
      const usage = await quotas.usage(request.params.id, request.query);
      assertCallerCoversScope(callerOf(request), usage);
      return usage;
    },
  );
}
