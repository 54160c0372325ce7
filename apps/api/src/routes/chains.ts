import {
  type ChainRun,
  ChainCancelInput,
  ChainDagResponse,
  ChainDefinition,
  ChainDefinitionList,
  ChainDefinitionParams,
  ChainDefinitionView,
  ChainRunDetail,
  ChainRunList,
  ChainRunListQuery,
  ChainRunParams,
  ErrorBody,
  errors,
} from '@sluice/core';
import { actionRecordFilter, assertCoversOrNotFound, tenantFilterFor } from '@sluice/auth';
import { runDetail, type ChainDefinitions, type ChainRuns } from '@sluice/gateway';
import type { FastifyInstance } from 'fastify';
import { parseRequest, requestSchema, responseSchema, noContent } from '@sluice/http';
import { callerOf } from '../plugins/access-control.js';

const tags = ['chains'];
const error = responseSchema(ErrorBody);
const params = requestSchema(ChainDefinitionParams);
const view = responseSchema(ChainDefinitionView);
const body = requestSchema(ChainDefinition);
// A chain calls providers for whichever tenant's rule starts it: changing one is an admin's job.
const manage = { access: 'admin' } as const;
const read = { access: 'read' } as const;
// Cancelling stops provider calls a dispatch started: what dispatching needs.
const cancel = { access: 'dispatch' } as const;
const runParams = requestSchema(ChainRunParams);
const detail = responseSchema(ChainRunDetail);

type NameRoute = { Params: { name: string } };

/** A run's grant tuple: the action that started it (a run stored without its provider and action type needs a grant on every one). */
function runTuple(run: ChainRun): { namespace: string; tenant: string; provider: string; action_type: string } {
  const { provider = '*', action_type = '*' } = run.trigger;
  return { namespace: run.namespace, tenant: run.tenant, provider, action_type };
}
type RunRoute = { Params: { id: string } };

export async function chainsRoutes(app: FastifyInstance, opts: { definitions: ChainDefinitions; runs: ChainRuns }): Promise<void> {
  const { definitions, runs } = opts;
  /**
   * A run of the id, when a grant covers the action that started it: its steps hold that action's
   * payload (and what providers answered to it), so anything else reads as unknown (404), for a
   * read and a cancel alike. A run stored without the trigger's provider and action type needs
   * a grant on every provider and action type.
   */
  const visibleRun = async (request: { params: { id: string } } & Parameters<typeof callerOf>[0]) => {
    const run = await runs.get(request.params.id);
    assertCoversOrNotFound(callerOf(request), runTuple(run), () => errors.notFound('chain run', run.id));
    return run;
  };

  app.get<{ Querystring: ChainRunListQuery }>(
    '/v1/chains',
    {
      config: read,
      schema: {
        tags,
        summary: 'List chain runs (newest first; status, chain_name, namespace and tenant filters)',
        querystring: requestSchema(ChainRunListQuery),
        response: { 200: responseSchema(ChainRunList), 400: error, 403: error },
      },
    },
    async (request) => {
      const caller = callerOf(request);
      const tenant = tenantFilterFor(caller, request.query);
      // The list shows what reading by id shows: runs whose starting action a grant covers
      // (no filter for a caller some grant lets read every run).
      const covers = actionRecordFilter(caller);
      return runs.list({ ...request.query, tenant }, covers && ((run) => covers(runTuple(run))));
    },
  );

  app.get<RunRoute>(
    '/v1/chains/:id',
    {
      config: read,
      schema: {
        tags,
        summary: 'One chain run: status, each step’s status and response, timing, execution path',
        params: runParams,
        response: { 200: detail, 403: error, 404: error },
      },
    },
    async (request) => runDetail(await visibleRun(request)),
  );

  app.post<RunRoute & { Body: ChainCancelInput }>(
    '/v1/chains/:id/cancel',
    {
      config: cancel,
      schema: {
        tags,
        summary: 'Cancel a running chain run and the sub-chain runs below it',
        description: 'No later step starts; a step already calling its provider finishes but is not recorded. 409 when the run is not running.',
        params: runParams,
        body: requestSchema(ChainCancelInput),
        response: { 200: detail, 400: error, 403: error, 404: error, 409: error },
      },
    },
    async (request) => {
      const run = await visibleRun(request);
      const input = parseRequest(ChainCancelInput, request.body ?? {});
      const caller = callerOf(request);
      // With authentication on, the run records who cancelled it: a caller cannot name someone else.
      if (caller.method !== 'anonymous' && input.cancelled_by !== undefined && input.cancelled_by !== caller.id) {
        throw errors.validation([{ path: 'cancelled_by', message: `must be the caller (${caller.id}) when authentication is on, or left out` }]);
      }
      const by = input.cancelled_by ?? caller.id;
      return runDetail(await runs.cancel(run.id, input.reason ?? null, by));
    },
  );

  app.get<RunRoute>(
    '/v1/chains/:id/dag',
    {
      config: read,
      schema: {
        tags,
        summary: 'The graph of a chain run: step statuses, execution path, sub-chain runs nested',
        params: runParams,
        response: { 200: responseSchema(ChainDagResponse), 403: error, 404: error },
      },
    },
    async (request) => runs.dag((await visibleRun(request)).id),
  );

  app.get(
    '/v1/chains/definitions',
    { config: read, schema: { tags, summary: 'List chain definitions (config and API)', response: { 200: responseSchema(ChainDefinitionList) } } },
    async () => definitions.list(),
  );

  app.post(
    '/v1/chains/definitions',
    {
      config: manage,
      schema: {
        tags,
        summary: 'Create a chain definition (shared by all replicas)',
        description: 'Checked against the others: its providers and sub-chains exist, and no chain reaches itself through sub-chains (400 naming the step).',
        body,
        response: { 201: view, 400: error, 409: error },
      },
    },
    async (request, reply) => reply.status(201).send(await definitions.create(parseRequest(ChainDefinition, request.body))),
  );

  app.get<NameRoute>(
    '/v1/chains/definitions/:name',
    { config: read, schema: { tags, summary: 'One chain definition', params, response: { 200: view, 404: error } } },
    async (request) => definitions.get(request.params.name),
  );

  app.put<NameRoute>(
    '/v1/chains/definitions/:name',
    {
      config: manage,
      schema: { tags, summary: 'Create or replace an API chain definition', params, body, response: { 200: view, 201: view, 400: error, 409: error } },
    },
    async (request, reply) => {
      const { view: saved, created } = await definitions.put(request.params.name, parseRequest(ChainDefinition, request.body));
      return reply.status(created ? 201 : 200).send(saved);
    },
  );

  app.delete<NameRoute>(
    '/v1/chains/definitions/:name',
    {
      config: manage,
      schema: {
        tags,
        summary: 'Delete an API chain definition (409 while another uses it as a sub_chain)',
        params,
        response: { 204: noContent, 404: error, 409: error },
      },
    },
    async (request, reply) => {
      await definitions.remove(request.params.name);
      return reply.status(204).send();
    },
  );

  app.get<NameRoute>(
    '/v1/chains/definitions/:name/dag',
    {
      config: read,
      schema: { tags, summary: 'The graph of a chain definition, sub-chains nested', params, response: { 200: responseSchema(ChainDagResponse), 404: error } },
    },
    async (request) => definitions.dag(request.params.name),
  );
}
