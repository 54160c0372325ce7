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
} from '@sluice/core';
import type { QuotaRepository } from '@sluice/gateway';
import type { FastifyInstance } from 'fastify';
import { requestSchema, responseSchema } from '../json-schema.js';

const tags = ['quotas'];
const error = responseSchema(ErrorBody);
const params = requestSchema(QuotaIdParams);
const policy = responseSchema(QuotaPolicy);
/**
 * Route config read by the authorization hook once auth is wired: writes need quotas_manage,
 * reads need read. Typed per route (Fastify's ContextConfig parameter) so no global augmentation
 * of FastifyContextConfig is needed here.
 */
type Permission = { permission: 'quotas_manage' | 'read' };
const manage: Permission = { permission: 'quotas_manage' };
const read: Permission = { permission: 'read' };

type IdRoute = { Params: { id: string } };

export async function quotasRoutes(app: FastifyInstance, opts: { quotas: QuotaRepository }): Promise<void> {
  const { quotas } = opts;

  app.post<{ Body: QuotaCreateInput }, Permission>(
    '/v1/quotas',
    {
      config: manage,
      schema: { tags, summary: 'Create a quota policy (shared by all replicas)', body: requestSchema(QuotaCreateInput), response: { 201: policy, 400: error, 409: error } },
    },
    async (request, reply) => reply.status(201).send(await quotas.create(request.body)),
  );

  app.get<{ Querystring: QuotaListQuery }, Permission>(
    '/v1/quotas',
    {
      config: read,
      schema: { tags, summary: 'List quota policies (config and API)', querystring: requestSchema(QuotaListQuery), response: { 200: responseSchema(QuotaList), 400: error } },
    },
    async (request) => quotas.list(request.query),
  );

  app.get<IdRoute, Permission>(
    '/v1/quotas/:id',
    { config: read, schema: { tags, summary: 'One quota policy', params, response: { 200: policy, 404: error } } },
    async (request) => quotas.get(request.params.id),
  );

  app.put<IdRoute & { Body: QuotaUpdateInput }, Permission>(
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
    async (request) => quotas.update(request.params.id, request.body),
  );

  app.delete<IdRoute, Permission>(
    '/v1/quotas/:id',
    { config: manage, schema: { tags, summary: 'Delete an API quota policy', params, response: { 404: error, 409: error } } },
    async (request, reply) => {
      await quotas.delete(request.params.id);
      return reply.status(204).send();
    },
  );

  app.get<IdRoute & { Querystring: QuotaUsageQuery }, Permission>(
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
    async (request) => quotas.usage(request.params.id, request.query),
  );
}
