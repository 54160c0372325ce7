import type { ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply } from 'fastify';

const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  // nginx (the compose load balancer, most ingresses) would otherwise buffer the stream.
  'x-accel-buffering': 'no',
};

/**
 * Server-sent-event responses of one route plugin: `start` takes a reply over (Fastify no longer
 * answers it), sends the headers and a first comment. Streams never end on their own, so the
 * plugin ends every open one before the server closes, or shutting down would wait for clients.
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
      res.on('close', () => open.delete(res));
      res.writeHead(200, SSE_HEADERS);
      res.write(': connected\n\n');
      return res;
    },
  };
}
