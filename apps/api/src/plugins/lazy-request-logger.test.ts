import Fastify, { LogController, type FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { capturedLogLines } from '../../../../test/support/log-lines.js';
import { lazyRequestLogger } from './lazy-request-logger.js';

describe('lazyRequestLogger (request.log made on first use)', () => {
  const open: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((app) => app.close()));
  });

  async function server(level = 'info') {
    const { destination, lines } = capturedLogLines();
    let children = 0;
    // Our logger's options, plus a count of the children pino makes (onChild is inherited by them).
    const logger = pino({ level, redact: { paths: ['*.token'], censor: '[REDACTED]' }, onChild: () => void children++ }, destination);
    const app = Fastify({
      loggerInstance: logger as FastifyBaseLogger,
      logController: new LogController({ disableRequestLogging: true }),
      childLoggerFactory: lazyRequestLogger,
    });
    app.get('/quiet', async () => ({ ok: true }));
    app.get('/loud', async (request) => {
      request.log.warn({ detail: 1, credentials: { token: 'hidden' } }, 'something to say');
      request.log.debug('below the level');
      return { level: request.log.level };
    });
    app.get('/nested', async (request) => {
      request.log.child({ part: 'inner' }).info('from a child');
      return {};
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    open.push(app);
    const address = app.server.address();
    const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    // The lines the requests write: not the server's own (listening).
    const from = lines.length;
    return { base, logged: () => lines.slice(from), children: () => children };
  }

  it('makes no child logger for a request that logs nothing', async () => {
    const s = await server();
    const before = s.children();
    for (let i = 0; i < 5; i++) expect((await fetch(`${s.base}/quiet`)).status).toBe(200);
    expect(s.children() - before).toBe(0);
    expect(s.logged()).toEqual([]);
  });

  it("writes a request's line as pino's own child would: its reqId bound, redaction and level kept", async () => {
    const s = await server();
    const res = await fetch(`${s.base}/loud`, { headers: { 'x-request-id': 'given' } });
    expect(await res.json()).toEqual({ level: 'info' });
    expect(s.logged()).toHaveLength(1);
    expect(s.logged()[0]).toMatchObject({ level: 40, reqId: expect.any(String), detail: 1, credentials: { token: '[REDACTED]' }, msg: 'something to say' });
    const nested = await server();
    await fetch(`${nested.base}/nested`);
    expect(nested.logged()).toEqual([expect.objectContaining({ reqId: expect.any(String), part: 'inner', msg: 'from a child' })]);
  });

  it('reports the level a request logger would have', async () => {
    const s = await server('debug');
    const res = await fetch(`${s.base}/loud`);
    expect(await res.json()).toEqual({ level: 'debug' });
    expect(s.logged().map((l) => l.msg)).toEqual(['something to say', 'below the level']);
  });
});
