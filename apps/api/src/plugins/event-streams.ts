import type { ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply } from 'fastify';

const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  // nginx (the compose load balancer, most ingresses) would otherwise buffer the stream.
  'x-accel-buffering': 'no',
};

/** How often an open stream's credentials are checked again: a revoked caller hears at most this much more. */
const CALLER_RECHECK_MS = 5_000;

/**
 * Server-sent-event responses of one route plugin: `start` takes a reply over (Fastify no longer
 * answers it), sends the headers and a first comment. Streams never end on their own, so the
 * plugin ends every open one before the server closes, or shutting down would wait for clients.
 * The caller is authenticated again every CALLER_RECHECK_MS: a stream whose key was removed, whose
 * token was revoked or expired, or whose role or grants changed is ended (a reconnect then meets
 * the credentials as they are now).
 */
export function eventStreams(app: FastifyInstance): { start(reply: FastifyReply): ServerResponse } {
  const open = new Set<ServerResponse>();
  app.addHook('preClose', async () => {
    for (const res of open) res.end();
  });
  return {
    start(reply) {
      reply.hijack();
      const res = reply.raw;
      open.add(res);
      const recheck = setInterval(() => {
        app.callerUnchanged(reply.request).then(
          (unchanged) => {
            if (unchanged || res.writableEnded) return;
            reply.request.log.info({ caller: reply.request.caller?.id }, 'stream ended: its credentials no longer hold');
            res.end();
          },
          () => undefined,
        );
      }, CALLER_RECHECK_MS);
      recheck.unref();
      res.on('close', () => {
        clearInterval(recheck);
        open.delete(res);
      });
      res.writeHead(200, SSE_HEADERS);
      res.write(': connected\n\n');
      return res;
    },
  };
}
