import { ProviderHealthList, type ProviderHealthEntry } from '@sluice/core';
import type { FastifyInstance } from 'fastify';
import { responseSchema } from '@sluice/http';

export async function providersHealthRoutes(app: FastifyInstance, opts: { providersHealth: () => Promise<ProviderHealthEntry[]> }): Promise<void> {
  app.get(
    '/v1/providers/health',
    {
      config: { access: 'read' },
      schema: {
        tags: ['circuit-breakers'],
        summary: 'Every configured provider’s health: attempts, success rate and latency percentiles over the last five minutes, all replicas summed',
        response: { 200: responseSchema(ProviderHealthList) },
      },
    },
    async () => ({ providers: await opts.providersHealth() }),
  );
}
