import type { SluiceConfig } from '@sluice/config';
import { AlertmanagerWebhook, BatchResponse, ErrorBody, PostableAlerts, SluiceError, type BatchItemResult, type Clock } from '@sluice/core';
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

/**
 * Maps the alerts, then admits and dispatches those that map as a batch would be; an alert that
 * cannot map gets an error result in its place. Neither sender retries a refused request (they
 * send every active alert again), so one unroutable alert must not hold back the others.
 */
async function dispatchAlerts(request: FastifyRequest, alerts: readonly IncomingAlert[], opts: AlertmanagerRoutesOptions) {
  const mapped = actionsOfAlerts(alerts, opts.config.routes, opts.clock.now());
  const actions = mapped.flatMap((m) => ('action' in m ? [m.action] : []));
  const dispatched =
    actions.length === 0 ? [] : await opts.gateway.dispatchBatch(actions, { ...(await admit(request, actions, opts.rateLimiter)), dryRun: false });
  const problems = mapped.flatMap((m) => ('problems' in m ? m.problems : []));
  let next = 0;
  const results = mapped.map(
    (m): BatchItemResult =>
      'action' in m
        ? (dispatched[next++] as BatchItemResult)
        : { status: 'error', error: { code: 'VALIDATION_FAILED', message: m.problems.map((p) => `${p.path} ${p.message}`).join('; ') } },
  );
  return { results, problems, dispatched: actions.length };
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
            'Each alert that maps to an action through alertmanager.routes is dispatched; when some do not, the others are still dispatched and the answer is 400 naming those refused, as Alertmanager takes the valid alerts of a request. An alert whose endsAt has passed is resolved. Answers 200 with no body, as Alertmanager does.',
          body: requestSchema(PostableAlerts),
          response: { 200: { type: 'null', description: 'accepted' }, 400: amError, 401: amError, 403: amError, 429: amError },
        },
      },
      async (request, reply) => {
        const { problems, dispatched } = await dispatchAlerts(request, request.body, opts);
        if (problems.length > 0) {
          const refused = `${dispatched} of ${request.body.length} alerts dispatched; refused: ${problems.map((p) => `${p.path} ${p.message}`).join('; ')}`;
          throw new SluiceError('VALIDATION_FAILED', refused, { details: problems });
        }
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
          'Each alert that maps to an action through alertmanager.routes is dispatched; one that does not gets an error result (VALIDATION_FAILED) in its place. Results come back in the order of the alerts.',
        body: requestSchema(AlertmanagerWebhook),
        response: { 200: responseSchema(BatchResponse), 400: responseSchema(ErrorBody), 401: responseSchema(ErrorBody), 403: responseSchema(ErrorBody) },
      },
    },
    async (request) => ({ results: (await dispatchAlerts(request, request.body.alerts, opts)).results }),
  );
}
