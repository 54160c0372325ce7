import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentialsFile, keyHeader, WILDCARD_GRANT } from '../support/credentials.js';
import { BACKENDS, startGateway, type RunningGateway } from '../support/start-gateway.js';

type Operation = { responses: Record<string, unknown>; requestBody?: unknown };
type Doc = { paths: Record<string, Record<string, Operation>> };

const KEYS = [
  { name: 'sweep-admin', role: 'admin' as const, grants: [WILDCARD_GRANT] },
  { name: 'sweep-viewer', role: 'viewer' as const, grants: [{ tenants: ['other'], namespaces: ['other'], actions: ['*'] }] },
];

/** The live stream never ends; its statuses have tests of their own (stream.test.ts). */
const STREAMING = new Set(['get /v1/stream']);

/**
 * Every operation of the OpenAPI document, called the ways a client gets wrong: no credentials, a
 * caller without the permission, ids that do not exist, an empty or missing body, a stray field.
 * The test gateway turns a status the operation does not document, or a body its schema does not
 * allow, into a 500 (response-check.ts), so "no 500" here means "every answer is documented".
 */
describe.each(BACKENDS)('every operation answers as documented (%s)', (backend) => {
  let gw: RunningGateway;
  let operations: { method: string; path: string; op: Operation }[];
  beforeAll(async () => {
    gw = await startGateway(backend, { bus: { enabled: true }, auth: { enabled: true, file: credentialsFile({ keys: KEYS }).file } });
    const doc = (await (await fetch(`${gw.url}/api-doc/openapi.json`)).json()) as Doc;
    operations = Object.entries(doc.paths)
      .flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ method, path, op })))
      .filter(({ method, path }) => !STREAMING.has(`${method} ${path}`));
  });
  afterAll(async () => gw?.close());

  async function call(method: string, path: string, headers: Record<string, string>, body?: string) {
    const url = `${gw.url}${path.replace(/\{[^}]+\}/g, 'no-such-thing')}`;
    const res = await fetch(url, {
      method: method.toUpperCase(),
      headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body }),
    });
    const text = await res.text();
    return { status: res.status, text };
  }

  it('finds the operations', () => {
    expect(operations.length).toBeGreaterThan(100);
  });

  for (const [name, headers, body] of [
    ['without credentials', {}, undefined],
    ['as a viewer of another tenant', keyHeader('sweep-viewer'), undefined],
    ['as an admin, unknown ids, no body', keyHeader('sweep-admin'), undefined],
    ['as an admin, unknown ids, an empty object', keyHeader('sweep-admin'), '{}'],
    ['as an admin, unknown ids, a stray field', keyHeader('sweep-admin'), '{"no_such_field":1}'],
    ['as an admin, unknown ids, not JSON', keyHeader('sweep-admin'), '{'],
  ] as const) {
    it(`answers ${name} with documented statuses and bodies`, async () => {
      const undocumented: string[] = [];
      for (const { method, path, op } of operations) {
        const sendsBody = body !== undefined && method !== 'get' && method !== 'delete';
        const { status, text } = await call(method, path, headers, sendsBody ? body : undefined);
        if (status >= 500 && status !== 503) undocumented.push(`${method.toUpperCase()} ${path} → ${status} ${text.slice(0, 200)}`);
        else if (!(String(status) in op.responses))
          undocumented.push(`${method.toUpperCase()} ${path} → ${status} (document lists ${Object.keys(op.responses)})`);
      }
      expect(undocumented).toEqual([]);
    });
  }
});
