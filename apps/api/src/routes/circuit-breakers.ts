import { CircuitBreakerChanged, CircuitBreakerList, ErrorBody, ProviderParams, errors } from '@sluice/core';
import type { CircuitBreakers } from '@sluice/gateway';
import { assertCallerCovers } from '@sluice/auth';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { requestSchema, responseSchema } from '@sluice/http';
import { callerOf } from '../plugins/access-control.js';

const tags = ['circuit-breakers'];
const error = responseSchema(ErrorBody);
// The spec puts all three behind admin or operator: the list too.
const manage = { access: 'circuit_breaker_manage' } as const;
const params = requestSchema(ProviderParams);

type ProviderRoute = { Params: { provider: string } };

/**
 * A breaker is the provider's for every tenant: forcing it open or closed takes a grant over every
 * tenant, namespace and action type of that provider, as a rule write does (the role alone would
 * let a tenant's operator cut the provider off for all tenants).
 */
const everyCallOfProvider = async (request: FastifyRequest<ProviderRoute>) =>
  assertCallerCovers(callerOf(request), { tenant: '*', namespace: '*', provider: request.params.provider, action_type: '*' });

export async function circuitBreakersRoutes(app: FastifyInstance, opts: { breakers: CircuitBreakers | null }): Promise<void> {
  const breakers = (): CircuitBreakers => {
    if (!opts.breakers) throw errors.notFoundMessage('circuit breakers are not enabled');
    return opts.breakers;
  };

  app.get(
    '/admin/circuit-breakers',
    {
      config: manage,
      schema: {
        tags,
        summary: 'Every provider’s circuit breaker: state, thresholds, fallback',
        description: 'States are shared by all replicas. 404 while circuit_breaker.enabled is off.',
        response: { 200: responseSchema(CircuitBreakerList), 403: error, 404: error },
      },
    },
    async () => ({ circuit_breakers: await breakers().list() }),
  );

  for (const verb of ['trip', 'reset'] as const) {
    app.post<ProviderRoute>(
      `/admin/circuit-breakers/:provider/${verb}`,
      {
        config: manage,
        preHandler: everyCallOfProvider,
        schema: {
          tags,
          summary: verb === 'trip' ? 'Force a breaker open: calls are rejected or sent to its fallback' : 'Force a breaker closed',
          description: `${
            verb === 'trip' ? 'Open until reset, or until the recovery timeout lets a probe through.' : 'Closed with its failure count cleared.'
          } 404 when breakers are off or the provider is unknown; 403 unless a grant covers every tenant, namespace and action type of the provider.`,
          params,
          response: { 200: responseSchema(CircuitBreakerChanged), 403: error, 404: error },
        },
      },
      async (request) => (verb === 'trip' ? breakers().trip(request.params.provider) : breakers().reset(request.params.provider)),
    );
  }
}
