import { ErrorBody, SluiceError, StreamQuery, errors } from '@sluice/core';
import { callerScope, visibleTo } from '@sluice/auth';
import type { StreamService } from '@sluice/gateway';
import type { FastifyInstance } from 'fastify';
import { requestSchema, responseSchema } from '@sluice/http';
import { callerOf } from '../plugins/access-control.js';
import { eventStreams } from '../plugins/event-streams.js';

const error = responseSchema(ErrorBody);

export async function streamRoutes(app: FastifyInstance, opts: { stream: StreamService | null }): Promise<void> {
  const streams = eventStreams(app);

  app.get<{ Querystring: StreamQuery }>(
    '/v1/stream',
    {
      // No HEAD twin: it would open a stream with no body to carry it, and hang holding a slot.
      exposeHeadRoute: false,
      config: { access: 'stream_subscribe' },
      schema: {
        tags: ['stream'],
        summary: 'Server-sent events: dispatches, group flushes, state timeouts, chain steps, approvals',
        description:
          'text/event-stream: frames `event:`, `id:` (unique), one-line JSON `data:`. Filters AND-ed with the caller’s tenant grants. ' +
          'A client that falls behind gets `lagged` {skipped} and continues from the current position; `: ping` every 15 s; no replay ' +
          '(Last-Event-ID is ignored). 429 beyond server.max_sse_connections_per_tenant, counted cluster-wide; 503 when stream.enabled is off.',
        querystring: requestSchema(StreamQuery),
        response: { 200: { type: 'string', description: 'an endless text/event-stream' }, 400: error, 401: error, 403: error, 429: error, 503: error },
      },
    },
    async (request, reply) => {
      if (!opts.stream) throw errors.featureDisabled('SSE streaming is not enabled');
      const stream = opts.stream;
      const caller = callerOf(request);
      // The spec's per-tenant cap: a caller bound to one tenant counts there, any other caller on its own.
      const tenant = callerScope(caller).singleTenant;
      // The client may leave during the awaits below: noticed on the response from the start, so nothing is left held.
      let gone = false;
      reply.raw.on('close', () => {
        gone = true;
      });
      const connection = await stream.open(tenant !== null ? `tenant:${tenant}` : `caller:${caller.id}`);
      if (!connection)
        throw new SluiceError('RATE_LIMITED', 'too many concurrent SSE connections for this tenant', { extra: { retry_after: stream.retryAfterSeconds } });
      // Frames wait until the headers are out (an event may arrive while the subscription is being set up).
      const { raw } = reply;
      let pending: string[] | null = [];
      const sink = {
        write: (frame: string) => {
          if (!pending) return raw.write(frame);
          pending.push(frame);
          return true;
        },
        onDrain: (listener: () => void) => raw.on('drain', listener),
      };
      let stop: () => void;
      try {
        stop = await stream.subscribe(sink, request.query, (scope) => visibleTo(caller, scope));
      } catch (err) {
        await connection.release();
        throw err;
      }
      const cleanUp = () => {
        stop();
        connection.release().catch((err: unknown) => request.log.warn({ err }, 'stream connection lease not released'));
      };
      if (gone || raw.destroyed) {
        cleanUp();
        return reply.hijack();
      }
      // The first comment goes out once the subscription is live: a client that sees it misses nothing dispatched after.
      const res = streams.start(reply);
      res.on('close', cleanUp);
      for (const frame of pending) res.write(frame);
      pending = null;
    },
  );
}
