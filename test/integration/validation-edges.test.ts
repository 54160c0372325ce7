import { connect, createServer, type Socket } from 'node:net';
import { ERROR_CODES, type ErrorCode } from '@sluice/core';
import { edgeErrorOptions } from '@sluice/http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentialsFile, keyHeader, rawKey, WILDCARD_GRANT } from '../support/credentials.js';
import { BACKENDS, postJson, requestJson, sampleAction, startGateway, type RunningGateway } from '../support/start-gateway.js';

/**
 * Issue 18, item 10: where validation and the docs disagreed. Limits out of range are 400s, not
 * clamped; two Authorization headers are a 401; no Fastify code and no code-less Node answer
 * reaches a client; cron steps and ranges stay inside their field; bodies are UTF-8 or 415.
 */

type Json = Record<string, unknown>;

interface RawAnswer {
  status: number;
  statusLine: string;
  headers: Record<string, string>;
  body: Json | null;
}

/** Parses what came back on a raw connection: status line, headers, a JSON body (null when none). */
function parseAnswer(raw: string): RawAnswer {
  const split = raw.indexOf('\r\n\r\n');
  const head = split < 0 ? raw : raw.slice(0, split);
  const rest = split < 0 ? '' : raw.slice(split + 4);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = headers['content-length'] === undefined ? rest.length : Number(headers['content-length']);
  const text = Buffer.from(rest).subarray(0, length).toString();
  return { status: Number(statusLine.split(' ')[1]), statusLine, headers, body: text ? (JSON.parse(text) as Json) : null };
}

/** Reads a socket to its end (or reset: the server may close hard after answering), bounded in time. */
function readToEnd(socket: Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no end of answer within 5 s; got: ${Buffer.concat(chunks).toString().slice(0, 200)}`));
    }, 5000);
    const finish = () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString('latin1'));
    };
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('end', finish);
    socket.on('close', finish);
    socket.on('error', (err) => {
      if (chunks.length > 0) finish();
      else {
        clearTimeout(timer);
        reject(err);
      }
    });
  });
}

/** Sends `text` as is on a fresh connection (what no well-behaved client would send) and reads the answer. */
async function rawRequest(baseUrl: string, text: string): Promise<RawAnswer> {
  const { hostname, port } = new URL(baseUrl);
  const socket = connect(Number(port), hostname);
  const answer = readToEnd(socket);
  socket.write(text);
  return parseAnswer(await answer);
}

/** A GET with the given extra header lines, closing the connection after the answer. */
function rawGet(baseUrl: string, path: string, headerLines: string[]): Promise<RawAnswer> {
  return rawRequest(baseUrl, [`GET ${path} HTTP/1.1`, 'Host: localhost', ...headerLines, 'Connection: close', '', ''].join('\r\n'));
}

/** The error body everywhere: a message and one of our codes, never Fastify's (`FST_ERR_…`). */
function expectErrorBody(body: unknown, code: ErrorCode): void {
  expect(body).toMatchObject({ error: expect.any(String), code });
  expect(ERROR_CODES).toContain((body as Json).code);
}

const ROOT = `Bearer ${rawKey('root')}`;

describe.each(BACKENDS)('validation edges (%s)', (backend) => {
  let gw: RunningGateway;
  const get = (path: string) => requestJson('GET', `${gw.url}${path}`, undefined, keyHeader('root'));
  const post = (path: string, body?: unknown) => requestJson('POST', `${gw.url}${path}`, body, keyHeader('root'));
  const put = (path: string, body: unknown) => requestJson('PUT', `${gw.url}${path}`, body, keyHeader('root'));

  beforeAll(async () => {
    gw = await startGateway(backend, {
      auth: { enabled: true, file: credentialsFile({ keys: [{ name: 'root', role: 'admin', grants: [WILDCARD_GRANT] }] }).file },
      server: { max_body_bytes: 4096 },
      background: { enable_retention_reaper: false },
    });
  });
  afterAll(() => gw.close());

  describe('page sizes', () => {
    it('GET /v1/audit refuses a limit outside 1..1000 with 400 naming it, instead of clamping it', async () => {
      const tenant = `limits-${backend}`;
      for (let i = 0; i < 2; i++) expect((await postJson(`${gw.url}/v1/dispatch`, sampleAction({ tenant }), keyHeader('root'))).status).toBe(200);
      for (const limit of ['1001', '0', '-1', '100000']) {
        const res = await get(`/v1/audit?tenant=${tenant}&limit=${limit}`);
        expect(res.status, `limit=${limit}`).toBe(400);
        expectErrorBody(res.body, 'VALIDATION_FAILED');
        expect(res.body?.details).toEqual([expect.objectContaining({ path: 'querystring.limit' })]);
      }
      const one = await get(`/v1/audit?tenant=${tenant}&limit=1`);
      expect(one.status).toBe(200);
      expect(one.body).toMatchObject({ limit: 1, records: [expect.objectContaining({ tenant })] });
      expect((await get(`/v1/audit?tenant=${tenant}&limit=1000`)).body).toMatchObject({ limit: 1000 });
    });

    it('POST /v1/audit/replay refuses limit=0 (and over 1000) with 400, and replays nothing', async () => {
      const tenant = `replay-limits-${backend}`;
      expect((await postJson(`${gw.url}/v1/dispatch`, sampleAction({ tenant }), keyHeader('root'))).status).toBe(200);
      for (const limit of ['0', '-1', '1001']) {
        const res = await post(`/v1/audit/replay?tenant=${tenant}&limit=${limit}`);
        expect(res.status, `limit=${limit}`).toBe(400);
        expectErrorBody(res.body, 'VALIDATION_FAILED');
      }
      // A misspelt filter would widen what is re-dispatched: 400 naming it.
      const misspelt = await post(`/v1/audit/replay?tenat=${tenant}&limit=1`);
      expect(misspelt.status).toBe(400);
      expectErrorBody(misspelt.body, 'VALIDATION_FAILED');
      expect(JSON.stringify(misspelt.body)).toContain('tenat');
      // Nothing was replayed: the one original record is still alone.
      expect(((await get(`/v1/audit?tenant=${tenant}`)).body as { records: unknown[] }).records).toHaveLength(1);
      // offset skips records as in GET /v1/audit: past the only one, nothing is replayed.
      expect((await post(`/v1/audit/replay?tenant=${tenant}&offset=1`)).body).toMatchObject({ replayed: 0, skipped: 0 });
      expect((await post(`/v1/audit/replay?tenant=${tenant}&limit=1`)).body).toMatchObject({ replayed: 1 });
    });

    it('every list endpoint with a limit refuses 0 and 1001, and its OpenAPI schema states the range', async () => {
      const doc = (await get('/api-doc/openapi.json')).body as {
        paths: Record<string, Record<string, { parameters?: { name: string; in: string; schema: Json }[] }>>;
      };
      const limited: string[] = [];
      for (const [path, operations] of Object.entries(doc.paths)) {
        for (const [method, operation] of Object.entries(operations)) {
          const limit = operation.parameters?.find((p) => p.in === 'query' && p.name === 'limit');
          if (!limit) continue;
          limited.push(`${method.toUpperCase()} ${path}`);
          expect(limit.schema, `${method} ${path}`).toMatchObject({ type: 'integer', minimum: 1, maximum: expect.any(Number) });
        }
      }
      expect(limited).toEqual(expect.arrayContaining(['GET /v1/audit', 'POST /v1/audit/replay', 'GET /v1/recurring']));
      for (const path of ['/v1/recurring?namespace=n&tenant=t&', '/v1/quotas?', '/v1/retention?', '/v1/groups?', '/v1/chains?']) {
        for (const limit of [0, 1001]) {
          const res = await get(`${path}limit=${limit}`);
          expect(res.status, `${path}limit=${limit}`).toBe(400);
          expectErrorBody(res.body, 'VALIDATION_FAILED');
        }
      }
    });
  });

  describe('credentials', () => {
    it('two Authorization headers are a 401, whichever comes first; one is fine', async () => {
      expect((await rawGet(gw.url, '/v1/audit?limit=1', [`Authorization: ${ROOT}`])).status).toBe(200);
      for (const pair of [
        [ROOT, 'Bearer not-a-key'],
        ['Bearer not-a-key', ROOT],
        [ROOT, ROOT],
      ]) {
        const res = await rawGet(
          gw.url,
          '/v1/audit?limit=1',
          pair.map((value) => `Authorization: ${value}`),
        );
        expect(res.status, pair.join(' | ')).toBe(401);
        expect(res.body).toEqual({ error: 'multiple Authorization headers', code: 'UNAUTHORIZED' });
        expect(res.headers['www-authenticate']).toBe('Bearer realm="sluice"');
      }
    });

    it('two X-API-Key headers are a 401 too', async () => {
      expect((await rawGet(gw.url, '/v1/audit?limit=1', [`X-API-Key: ${rawKey('root')}`])).status).toBe(200);
      const res = await rawGet(gw.url, '/v1/audit?limit=1', [`X-API-Key: ${rawKey('root')}`, `X-API-Key: ${rawKey('root')}`]);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'multiple X-API-Key headers', code: 'UNAUTHORIZED' });
    });
  });

  describe("Fastify's own errors", () => {
    it('a path with broken percent-encoding is 400 BAD_REQUEST, not FST_ERR_BAD_URL', async () => {
      const res = await rawGet(gw.url, '/v1/audit/%E0%A4%A', [`Authorization: ${ROOT}`]);
      expect(res.status).toBe(400);
      expectErrorBody(res.body, 'BAD_REQUEST');
      expect(res.body?.error).toMatch(/malformed URL/);
    });

    it('a path parameter over the router limit is 400 BAD_REQUEST, not 414 FST_ERR_MAX_PARAM_LENGTH', async () => {
      const res = await get(`/v1/audit/${'a'.repeat(1025)}`);
      expect(res.status).toBe(400);
      expectErrorBody(res.body, 'BAD_REQUEST');
      expect(res.body?.error).toBe('a path parameter is too long');
    });

    it('an id of the 256 characters the schemas allow reaches its route (404 not found, not refused by the router)', async () => {
      const res = await get(`/v1/audit/${'a'.repeat(256)}`);
      expect(res.status).toBe(404);
      expect(res.body?.error).toMatch(/no audit record found/);
    });

    it('an unsupported content type names the type the request sent', async () => {
      const res = await requestJson('POST', `${gw.url}/v1/dispatch`, undefined, { ...keyHeader('root'), 'content-type': 'text/xml' });
      expect(res.status).toBe(415);
      expect(res.body).toEqual({ error: 'unsupported content type: text/xml; expected application/json', code: 'UNSUPPORTED_MEDIA_TYPE' });
    });

    it('no request shape gets an FST_ code or a body without our code', async () => {
      const url = `${gw.url}/v1/dispatch`;
      const auth = keyHeader('root');
      const json = { ...auth, 'content-type': 'application/json' };
      const cases: [string, Promise<{ status: number; body: Json | null }>, ErrorCode][] = [
        ['bad url', rawGet(gw.url, '/v1/audit/%zz', [`Authorization: ${ROOT}`]), 'BAD_REQUEST'],
        ['long param', get(`/v1/audit/${'b'.repeat(1100)}`), 'BAD_REQUEST'],
        ['empty JSON body', requestJson('POST', url, '', json), 'INVALID_JSON'],
        ['malformed JSON', requestJson('POST', url, '{"a":', json), 'INVALID_JSON'],
        ['body over max_body_bytes', requestJson('POST', url, JSON.stringify(sampleAction({ payload: { x: 'y'.repeat(8000) } })), json), 'PAYLOAD_TOO_LARGE'],
        ['text body', requestJson('POST', url, 'hello', { ...auth, 'content-type': 'text/plain' }), 'UNSUPPORTED_MEDIA_TYPE'],
        ['content type that does not parse', requestJson('POST', url, '{}', { ...auth, 'content-type': 'json' }), 'UNSUPPORTED_MEDIA_TYPE'],
        ['unknown route', get('/v1/nowhere'), 'NOT_FOUND'],
      ];
      for (const [name, pending, code] of cases) {
        const res = await pending;
        expect(res.body, name).not.toBeNull();
        expect(String(res.body?.code), name).not.toMatch(/^FST_/);
        expect(res.body?.code, name).toBe(code);
      }
    });
  });

  describe("Node's HTTP parser errors", () => {
    it('a malformed request line is 400 with our JSON body and Connection: close', async () => {
      for (const garbage of ['THIS IS NOT HTTP\r\n\r\n', 'GET /health HTTP/9.9.9\r\nHost: x\r\n\r\n', 'GET /health HTTP/1.1\r\nBad Header Line\r\n\r\n']) {
        const res = await rawRequest(gw.url, garbage);
        expect(res.statusLine, JSON.stringify(garbage)).toBe('HTTP/1.1 400 Bad Request');
        expect(res.headers['content-type']).toMatch(/^application\/json/);
        expect(res.headers.connection).toBe('close');
        expect(res.body).toEqual({ error: 'malformed HTTP request', code: 'BAD_REQUEST' });
      }
      expect((await requestJson('GET', `${gw.url}/health`)).status).toBe(200);
    });

    it('headers over the 16 KiB limit are 431 with our JSON body', async () => {
      const res = await rawGet(gw.url, '/health', [`X-Big: ${'a'.repeat(20 * 1024)}`]);
      expect(res.statusLine).toBe('HTTP/1.1 431 Request Header Fields Too Large');
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.headers.connection).toBe('close');
      expect(res.body).toEqual({ error: 'request headers are too large', code: 'HEADERS_TOO_LARGE' });
    });
  });

  describe('cron fields', () => {
    const template = { namespace: 'payments', tenant: `cron-${backend}`, provider: 'email', action_type: 'send', payload: {} };
    const BAD: [string, RegExp][] = [
      ['*/999999999 * * * *', /minute step 999999999 is out of range \(1-59\)/],
      ['*/60 * * * *', /minute step 60/],
      ['1-5/999 * * * *', /minute step 999/],
      ['0-99 * * * *', /minute range 0-99 is out of range \(0-59\)/],
      ['0 */24 * * *', /hour step 24 is out of range \(1-23\)/],
      ['0 25 * * *', /hour value 25/],
      ['0 0 */32 * *', /day-of-month step 32/],
      ['0 0 0 * *', /day-of-month value 0 is out of range \(1-31\)/],
      ['0 0 1 */13 *', /month step 13 is out of range \(1-12\)/],
      ['0 0 1 1-13 *', /month range 1-13/],
      ['0 0 * * */8', /day-of-week step 8 is out of range \(1-7\)/],
      ['0 0 * * 1,9', /day-of-week value 9 is out of range \(0-7\)/],
      ['*/0 * * * *', /minute step 0 is out of range/],
    ];

    it('a step, value or range outside its field is 400 naming the field (create and update)', async () => {
      for (const [cron, message] of BAD) {
        const res = await post('/v1/recurring', { ...template, cron_expr: cron });
        expect(res.status, cron).toBe(400);
        expectErrorBody(res.body, 'BAD_REQUEST');
        expect(res.body?.error, cron).toMatch(message);
      }
      const created = await post('/v1/recurring', { ...template, cron_expr: '*/15 0-23/2 1-31 */3 MON-FRI' });
      expect(created.status).toBe(201);
      const id = (created.body as { recurring_id: string }).recurring_id;
      const update = await put(`/v1/recurring/${id}?namespace=payments&tenant=${template.tenant}`, { cron_expr: '*/999999999 * * * *' });
      expect(update.status).toBe(400);
      expect(update.body?.error).toMatch(/minute step 999999999/);
      for (const fine of ['*/59 * * * *', '0 */23 * * 0-7', '0 0 L * *', '@hourly']) {
        expect((await put(`/v1/recurring/${id}?namespace=payments&tenant=${template.tenant}`, { cron_expr: fine })).status, fine).toBe(200);
      }
    });

    it("the scheduler's repeat refuses the same (its own check, not only the API's)", async () => {
      const repeat = async () => gw.runtime.scheduler.repeat('validation-edges', { id: `edge-${backend}`, cron: '*/999999999 * * * *' });
      await expect(repeat()).rejects.toThrow(/minute step 999999999 is out of range/);
    });
  });

  describe('charsets', () => {
    const dispatchAs = (contentType: string) =>
      requestJson('POST', `${gw.url}/v1/dispatch`, JSON.stringify(sampleAction({ tenant: `charset-${backend}` })), {
        ...keyHeader('root'),
        'content-type': contentType,
      });

    it('a body declaring a charset other than utf-8 is 415 with our body, before it is parsed', async () => {
      for (const type of [
        'application/json; charset=utf-16',
        'application/json; charset=UTF-16LE',
        'application/json;charset="latin1"',
        'application/json; charset=',
      ]) {
        const res = await dispatchAs(type);
        expect(res.status, type).toBe(415);
        expectErrorBody(res.body, 'UNSUPPORTED_MEDIA_TYPE');
        expect(res.body?.error, type).toMatch(/^unsupported charset: .*; expected utf-8$/);
      }
      expect(((await get(`/v1/audit?tenant=charset-${backend}`)).body as { records: unknown[] }).records).toHaveLength(0);
    });

    it('utf-8 in any spelling, or no charset, is read', async () => {
      for (const type of [
        'application/json',
        'application/json; charset=utf-8',
        'application/json; charset=UTF-8',
        'application/json;charset=utf8',
        'application/json; charset="utf-8"',
      ]) {
        expect((await dispatchAs(type)).status, type).toBe(200);
      }
    });
  });
});

describe('server.request_timeout_seconds bounds a stalled request (memory)', () => {
  it('answers 408 REQUEST_TIMEOUT within the timeout and a few checks, for a stalled body and stalled headers', async () => {
    const gw = await startGateway('memory', { server: { request_timeout_seconds: 2 } });
    try {
      const { port } = new URL(gw.url);
      for (const partial of [
        'POST /v1/dispatch HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{"a":',
        'POST /v1/dispatch HTTP/1.1\r\nHost: x\r\nContent-Ty',
      ]) {
        const started = Date.now();
        const socket = connect(Number(port), '127.0.0.1');
        const answer = readToEnd(socket);
        socket.write(partial);
        expect(parseAnswer(await answer)).toMatchObject({ status: 408, body: { code: 'REQUEST_TIMEOUT' } });
        // Node alone answered a stalled body after the 60 s headers limit and a 30 s check: 88 s here.
        expect(Date.now() - started).toBeLessThan(4000);
      }
    } finally {
      await gw.close();
    }
  });
});

describe('client errors Node reports without a request (the clientError handler)', () => {
  /** Calls the handler on the server side of a real loopback connection and reads what the client gets. */
  async function answerTo(code: string): Promise<RawAnswer> {
    const server = createServer((socket) => {
      const err = Object.assign(new Error(code), { code, bytesParsed: 0, rawPacket: { type: 'Buffer', data: [] } });
      edgeErrorOptions.clientErrorHandler(err, socket);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const { port } = server.address() as { port: number };
      return parseAnswer(await readToEnd(connect(port, '127.0.0.1')));
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  }

  it('a request timeout is 408 REQUEST_TIMEOUT, an oversized chunk extension 413, anything else 400', async () => {
    expect(await answerTo('ERR_HTTP_REQUEST_TIMEOUT')).toMatchObject({
      statusLine: 'HTTP/1.1 408 Request Timeout',
      headers: { connection: 'close' },
      body: { error: 'request not received in time', code: 'REQUEST_TIMEOUT' },
    });
    expect(await answerTo('HPE_CHUNK_EXTENSIONS_OVERFLOW')).toMatchObject({ status: 413, body: { code: 'PAYLOAD_TOO_LARGE' } });
    expect(await answerTo('HPE_INVALID_METHOD')).toMatchObject({ status: 400, body: { code: 'BAD_REQUEST' } });
  });
});
