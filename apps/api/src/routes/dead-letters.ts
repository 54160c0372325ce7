import {
  DeadLetter,
  DeadLetterDrained,
  DeadLetterDrainInput,
  DeadLetterIdParams,
  DeadLetterList,
  DeadLetterListQuery,
  DeadLetterRetried,
  DeadLetterStats,
  ErrorBody,
  errors,
} from '@sluice/core';
import type { DeadLetterQueue, Gateway } from '@sluice/gateway';
import { callerCovers, tenantFilterFor, type Caller } from '@sluice/auth';
import type { FastifyInstance } from 'fastify';
import { requestSchema, responseSchema } from '@sluice/http';
import { traceparentOf } from '../trace-header.js';
import { callerOf } from '../plugins/access-control.js';
import type { RateLimiter } from '../rate-limiter.js';

const tags = ['dlq'];
const error = responseSchema(ErrorBody);
const read = { access: 'read' } as const;
// Retrying or draining hands an action on for execution: what dispatching needs.
const write = { access: 'dispatch' } as const;

/** An entry is the caller's when a grant covers its whole tuple, as dispatching its action would need. */
const coveredBy = (caller: Caller) => (entry: DeadLetter) =>
  callerCovers(caller, { namespace: entry.namespace, tenant: entry.tenant, provider: entry.provider, action_type: entry.action_type });

/** An entry is one action: outside the grants (its provider and action type too) it is not found, as an audit record. */
function visibleEntry(caller: Caller, entry: DeadLetter): void {
  if (!coveredBy(caller)(entry)) throw errors.notFound('dead letter', entry.id);
}

export async function deadLettersRoutes(
  app: FastifyInstance,
  opts: { queue: DeadLetterQueue | null; gateway: Gateway; rateLimiter: RateLimiter },
): Promise<void> {
  const { gateway } = opts;
  const queue = (): DeadLetterQueue => {
    if (!opts.queue) throw errors.featureNotEnabled('dead-letter queue');
    return opts.queue;
  };

  app.get<{ Querystring: DeadLetterListQuery }>(
    '/v1/dlq',
    {
      config: read,
      schema: {
        tags,
        summary: 'List dead letters: actions whose retryable failures outlived every retry (oldest first)',
        querystring: requestSchema(DeadLetterListQuery),
        response: { 200: responseSchema(DeadLetterList), 400: error, 403: error, 404: error },
      },
    },
    async (request) => {
      const caller = callerOf(request);
      const { limit, offset, ...filter } = request.query;
      const tenant = tenantFilterFor(caller, filter);
      return queue().list({ ...filter, tenant }, { limit, offset }, coveredBy(caller));
    },
  );

  app.get(
    '/v1/dlq/stats',
    { config: read, schema: { tags, summary: 'Dead-letter counts by tenant, provider and error code', response: { 200: responseSchema(DeadLetterStats) } } },
    async (request) => {
      if (!opts.queue) return { enabled: false, count: 0, by_tenant: {}, by_provider: {}, by_error_code: {} };
      const caller = callerOf(request);
      const tenant = tenantFilterFor(caller, {});
      const covered = coveredBy(caller);
      return { enabled: true, ...(await opts.queue.stats((entry) => (tenant === undefined || entry.tenant === tenant) && covered(entry))) };
    },
  );

  app.get<{ Params: { id: string } }>(
    '/v1/dlq/:id',
    {
      config: read,
      schema: {
        tags,
        summary: 'One dead letter',
        params: requestSchema(DeadLetterIdParams),
        response: { 200: responseSchema(DeadLetter), 403: error, 404: error },
      },
    },
    async (request) => {
      const entry = await queue().get(request.params.id);
      visibleEntry(callerOf(request), entry);
      return entry;
    },
  );

  app.post<{ Params: { id: string } }>(
    '/v1/dlq/:id/retry',
    {
      config: write,
      schema: {
        tags,
        summary: 'Dispatch a dead letter’s action again; removed when it succeeds',
        description:
          'The action runs through the whole pipeline under a new id, labelled dlq_retry_of. A failure keeps the entry with the new error (it is not queued twice).',
        params: requestSchema(DeadLetterIdParams),
        response: { 200: responseSchema(DeadLetterRetried), 403: error, 404: error, 409: error, 429: error },
      },
    },
    async (request) => {
      const caller = callerOf(request);
      const q = queue();
      const entry = await q.get(request.params.id);
      visibleEntry(caller, entry);
      // A retry is a dispatch: it counts against its tenant's request limit.
      await opts.rateLimiter.checkTenants([entry.tenant]);
      const traceparent = traceparentOf(request);
      return q.retry(request.params.id, (action) =>
        gateway.dispatch(action, { deadLetter: false, caller: { id: caller.id, method: caller.method }, traceparent }),
      );
    },
  );

  app.post<{ Body: DeadLetterDrainInput }>(
    '/v1/dlq/drain',
    {
      config: write,
      schema: {
        tags,
        summary: 'Remove and return matching dead letters (oldest first, at most limit), each to exactly one caller',
        description:
          'The entries are taken under a 60 s lease and removed once the answer has been written; a drain whose answer is not written (the client gave up, the replica died) gives them back.',
        body: requestSchema(DeadLetterDrainInput),
        response: { 200: responseSchema(DeadLetterDrained), 400: error, 403: error, 404: error },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      const { limit, ...filter } = request.body;
      const tenant = tenantFilterFor(caller, filter);
      const taken = await queue().drain({ ...filter, tenant }, limit, coveredBy(caller));
      // One turn of the loop, so that a close which has arrived is seen. A client that closed its
      // side while the drain ran (a timeout, a proxy giving up) would have the answer handed to
      // the kernel of a dead connection: its entries go back instead (a client that half-closes
      // on purpose gets them again from a later drain). A close that arrives with the answer
      // already written cannot be told from a delivery: those entries are gone with it.
      await new Promise((resolve) => setImmediate(resolve));
      // Removed once the answer is written; given back when the client has gone or the write fails.
      const settle = (what: 'commit' | 'release') =>
        void taken[what]().catch((err: unknown) => request.log.warn({ err, step: what }, 'dead-letter drain could not settle its entries'));
      if (reply.raw.destroyed || request.raw.socket.readableEnded) {
        settle('release');
        return reply;
      }
      reply.raw.once('close', () => settle(reply.raw.writableFinished ? 'commit' : 'release'));
      return { entries: taken.entries, count: taken.entries.length };
    },
  );
}
