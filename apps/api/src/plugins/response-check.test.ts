import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { installResponseCheck } from './response-check.js';

describe('installResponseCheck (responses held to their documented schemas)', () => {
  const open: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((app) => app.close()));
  });

  async function server(answer: unknown) {
    const app = Fastify();
    installResponseCheck(app);
    const documented = {
      type: 'object',
      properties: { count: { type: 'integer' }, at: { type: 'string', format: 'date-time' } },
      required: ['count'],
      additionalProperties: false,
    };
    app.get('/thing', { schema: { response: { 200: documented } } }, async () => answer);
    app.get('/free', async () => answer);
    // Typed loosely: Fastify would otherwise allow only the documented statuses in reply.code().
    const onlyOk: Record<string, unknown> = { 200: documented };
    const okOr4xx: Record<string, unknown> = { 200: documented, '4xx': { type: 'object' } };
    app.get('/gone', { schema: { response: onlyOk } }, async (_request, reply) => reply.code(404).send({ code: 'NOT_FOUND' }));
    app.get('/ranged', { schema: { response: okOr4xx } }, async (_request, reply) => reply.code(409).send({}));
    await app.listen({ port: 0, host: '127.0.0.1' });
    open.push(app);
    const address = app.server.address();
    return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  }

  it('sends a response that matches, in its wire form (a Date as its string)', async () => {
    const base = await server({ count: 2, at: new Date(0) });
    const res = await fetch(`${base}/thing`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ count: 2, at: '1970-01-01T00:00:00.000Z' });
  });

  it('turns a response with an undocumented field or a wrong type into a 500', async () => {
    for (const answer of [{ count: 2, extra: true }, { count: '2' }, {}]) {
      const base = await server(answer);
      const res = await fetch(`${base}/thing`);
      expect(res.status, JSON.stringify(answer)).toBe(500);
      expect(JSON.stringify(await res.json())).not.toContain('"count":');
    }
  });

  it('turns a status the route does not document into a 500; a range (4xx) documents its statuses', async () => {
    const base = await server({ count: 1 });
    const gone = await fetch(`${base}/gone`);
    expect(gone.status).toBe(500);
    expect(((await gone.json()) as { message: string }).message).toContain('answered 404');
    expect((await fetch(`${base}/ranged`)).status).toBe(409);
  });

  it('leaves routes without a response schema alone', async () => {
    const base = await server({ anything: 1 });
    expect(await (await fetch(`${base}/free`)).json()).toEqual({ anything: 1 });
  });
});
