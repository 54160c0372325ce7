import {
  ErrorBody,
  errors,
  Silence,
  SilenceCreateInput,
  SilenceExtendInput,
  SilenceIdParams,
  SilenceList,
  SilenceListQuery,
  SilenceUpdateInput,
} from '@sluice/core';
import type { SilenceService } from '@sluice/gateway';
import { assertCallerCoversScope, assertVisibleOrNotFound, tenantFilterFor, visibleTo } from '@sluice/auth';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { parseRequest, requestSchema, responseSchema, noContent } from '@sluice/http';
import { callerOf } from '../plugins/access-control.js';

const tags = ['silences'];
const error = responseSchema(ErrorBody);
const params = requestSchema(SilenceIdParams);
const silence = responseSchema(Silence);
const manage = { access: 'silences_manage' } as const;
const read = { access: 'read' } as const;

type IdRoute = { Params: { id: string } };

/** 404 when unknown, or when no grant covers the silence's namespace and tenant (a 403 would say it exists there). */
async function covered(request: FastifyRequest, silences: SilenceService, id: string): Promise<void> {
  assertVisibleOrNotFound(callerOf(request), await silences.stored(id), () => errors.notFound('silence', id));
}

export async function silencesRoutes(app: FastifyInstance, opts: { silences: SilenceService }): Promise<void> {
  const { silences } = opts;

  app.post<{ Body: SilenceCreateInput }>(
    '/v1/silences',
    {
      config: manage,
      schema: {
        tags,
        summary: 'Create a silence: suppress matching actions of a namespace and tenant (and its child tenants) for a time',
        description: 'Give ends_at or duration_seconds (ends_at wins); starts_at defaults to now. Applied on every replica within a second.',
        body: requestSchema(SilenceCreateInput),
        response: { 201: silence, 400: error, 403: error },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      const input = parseRequest(SilenceCreateInput, request.body);
      assertCallerCoversScope(caller, input);
      return reply.status(201).send(await silences.create(input, caller.id));
    },
  );

  app.get<{ Querystring: SilenceListQuery }>(
    '/v1/silences',
    {
      config: read,
      schema: {
        tags,
        summary: 'List silences (active and pending; expired ones with include_expired=true)',
        querystring: requestSchema(SilenceListQuery),
        response: { 200: responseSchema(SilenceList), 400: error, 403: error },
      },
    },
    async (request) => {
      const caller = callerOf(request);
      const tenant = tenantFilterFor(caller, request.query);
      return silences.list({ ...request.query, tenant, visible: (s) => visibleTo(caller, s) });
    },
  );

  app.get<IdRoute>(
    '/v1/silences/:id',
    { config: read, schema: { tags, summary: 'One silence, active or expired', params, response: { 200: silence, 403: error, 404: error } } },
    async (request) => {
      await covered(request, silences, request.params.id);
      return silences.get(request.params.id);
    },
  );

  app.put<IdRoute & { Body: SilenceUpdateInput }>(
    '/v1/silences/:id',
    {
      config: manage,
      schema: {
        tags,
        summary: 'Change a silence’s ends_at and/or comment (matchers are immutable)',
        params,
        description: "An expired (or deleted) silence's ends_at cannot change (409): create a new one. Its comment can.",
        body: requestSchema(SilenceUpdateInput),
        response: { 200: silence, 400: error, 403: error, 404: error, 409: error },
      },
    },
    async (request) => {
      await covered(request, silences, request.params.id);
      return silences.update(request.params.id, parseRequest(SilenceUpdateInput, request.body));
    },
  );

  app.delete<IdRoute>(
    '/v1/silences/:id',
    {
      config: manage,
      schema: {
        tags,
        summary: 'Expire a silence now (soft: the record stays, listable with include_expired)',
        params,
        response: { 204: noContent, 403: error, 404: error },
      },
    },
    async (request, reply) => {
      await covered(request, silences, request.params.id);
      await silences.expire(request.params.id);
      return reply.status(204).send();
    },
  );

  app.post<IdRoute>(
    '/v1/silences/:id/expire',
    {
      config: manage,
      schema: { tags, summary: 'Expire a silence now (as DELETE), answering the expired silence', params, response: { 200: silence, 403: error, 404: error } },
    },
    async (request) => {
      await covered(request, silences, request.params.id);
      return silences.expire(request.params.id);
    },
  );

  app.post<IdRoute & { Body: SilenceExtendInput }>(
    '/v1/silences/:id/extend',
    {
      config: manage,
      schema: {
        tags,
        summary: 'Add minutes to a silence’s current ends_at',
        description: 'An expired silence is not extended (409): create a new one.',
        params,
        body: requestSchema(SilenceExtendInput),
        response: { 200: silence, 400: error, 403: error, 404: error, 409: error },
      },
    },
    async (request) => {
      await covered(request, silences, request.params.id);
      return silences.extend(request.params.id, request.body.minutes);
    },
  );
}
