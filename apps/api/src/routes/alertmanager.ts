import type { SluiceConfig } from '@sluice/config';
import { AlertmanagerWebhook, BatchResponse, ErrorBody, PostableAlerts, type Clock } from '@sluice/core';
import { actionsOfAlerts, type Gateway, type IncomingAlert } from '@sluice/gateway';
import { type ErrorHandlingOptions, installAlertmanagerErrorHandling, requestSchema, responseSchema } from '@sluice/http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RateLimiter } from '../rate-limiter.js';
import { admit } from './dispatch.js';

export interface AlertmanagerRoutesOptions {
  gateway: Gateway;
  rateLimiter: RateLimiter;
  clock: Clock;
  config: SluiceConfig['alertmanager'];
  errorHandling: ErrorHandlingOptions;
}

const tags = ['alertmanager'];
const dispatchAccess = { access: 'dispatch' } as const;
/** Alertmanager answers its errors as a JSON string. */
const amError = { type: 'string' } as const;

/** Maps the alerts (all or none), then admits and dispatches them as a batch would be. */
async function dispatchAlerts(request: FastifyRequest, alerts: readonly IncomingAlert[], opts: AlertmanagerRoutesOptions) {
  const actions = actionsOfAlerts(alerts, opts.config.routes, opts.clock.now());
  if (actions.length === 0) return [];
  const options = await admit(request, actions, opts.rateLimiter);
  return opts.gateway.dispatchBatch(actions, { ...options, dryRun: false });
}

/**
 * Alerts in: Prometheus's `alerting.alertmanagers` (`POST /api/v2/alerts`, in Alertmanager's own
 * API, errors as a JSON string) and Alertmanager's `webhook_configs` (`POST
 * /v1/integrations/alertmanager`, Sluice's API). Each alert becomes an action by the first
 * `alertmanager.routes` entry that takes it (docs/alertmanager.md).
 */
export async function alertmanagerRoutes(app: FastifyInstance, opts: AlertmanagerRoutesOptions): Promise<void> {
  await app.register(async (v2) => {
    installAlertmanagerErrorHandling(v2, opts.errorHandling);
    v2.post<{ Body: IncomingAlert[] }>(
      '/api/v2/alerts',
      {
        config: dispatchAccess,
        schema: {
          tags,
          summary: 'Alerts from Prometheus (Alertmanager API v2): each becomes an action',
          description:
            'Every alert must map to an action through alertmanager.routes, or none is dispatched (400). An alert whose endsAt has passed is resolved. Answers 200 with no body, as Alertmanager does.',
          body: requestSchema(PostableAlerts),
          response: { 200: { type: 'null', description: 'accepted' }, 400: amError, 401: amError, 403: amError, 429: amError },
        },
      },
      async (request, reply) => {
        await dispatchAlerts(request, request.body, opts);
        return reply.status(200).send();
      },
    );
  });

  app.post<{ Body: AlertmanagerWebhook }>(
    '/v1/integrations/alertmanager',
    {
      config: dispatchAccess,
      schema: {
        tags,
        summary: 'A notification of an Alertmanager webhook receiver (webhook_configs, version 4): each alert becomes an action',
        description:
          'Every alert must map to an action through alertmanager.routes, or none is dispatched (400). Results come back in the order of the alerts.',
        body: requestSchema(AlertmanagerWebhook),
        response: { 200: responseSchema(BatchResponse), 400: responseSchema(ErrorBody), 401: responseSchema(ErrorBody), 403: responseSchema(ErrorBody) },
      },
    },
    async (request) => ({ results: await dispatchAlerts(request, request.body.alerts, opts) }),
  );
}
