import { ChainDagResponse, ChainDefinition, ChainDefinitionList, ChainDefinitionParams, ChainDefinitionView, ErrorBody } from '@sluice/core';
import type { ChainDefinitions } from '@sluice/gateway';
import type { FastifyInstance } from 'fastify';
import { parseRequest, requestSchema, responseSchema } from '@sluice/http';

const tags = ['chains'];
const error = responseSchema(ErrorBody);
const params = requestSchema(ChainDefinitionParams);
const view = responseSchema(ChainDefinitionView);
const body = requestSchema(ChainDefinition);
// A chain calls providers for whichever tenant's rule starts it: changing one is an admin's job.
const manage = { access: 'admin' } as const;
const read = { access: 'read' } as const;

type NameRoute = { Params: { name: string } };

export async function chainsRoutes(app: FastifyInstance, opts: { definitions: ChainDefinitions }): Promise<void> {
  const { definitions } = opts;

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
      schema: { tags, summary: 'Delete an API chain definition (409 while another uses it as a sub_chain)', params, response: { 404: error, 409: error } },
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
