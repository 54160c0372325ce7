import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentialsFile, keyHeader, WILDCARD_GRANT } from '../support/credentials.js';
import { documentedOperations, urlOfUnknown, type DocumentedOperation } from '../support/documented-operations.js';
import { BACKENDS, startGateway, type RunningGateway } from '../support/start-gateway.js';

const KEYS = [
  { name: 'sweep-admin', role: 'admin' as const, grants: [WILDCARD_GRANT] },
  { name: 'sweep-viewer', role: 'viewer' as const, grants: [{ tenants: ['other'], namespaces: ['other'], actions: ['*'] }] },
];

/**
 * Every operation of the OpenAPI document, called the ways a client gets wrong: no credentials, a
 * caller without the permission, ids that do not exist, an empty or missing body, a stray field.
 * The test gateway turns a status the operation does not document, or a body its schema does not
 * allow, into a 500 (response-check.ts), so "no 500" here means "every answer is documented".
 */
describe.each(BACKENDS)('every operation answers as documented (%s)', (backend) => {
  let gw: RunningGateway;
  let operations: DocumentedOperation[];
  beforeAll(async () => {
    gw = await startGateway(backend, { bus: { enabled: true }, auth: { enabled: true, file: credentialsFile({ keys: KEYS }).file } });
    operations = await documentedOperations(gw.url);
  });
  afterAll(async () => gw?.close());

  async function call(method: string, path: string, headers: Record<string, string>, body?: string) {
    const url = urlOfUnknown(gw.url, path);
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
      for (const { method, path, responses } of operations) {
        const sendsBody = body !== undefined && method !== 'get' && method !== 'delete';
        const { status, text } = await call(method, path, headers, sendsBody ? body : undefined);
        if (status >= 500 && status !== 503) undocumented.push(`${method.toUpperCase()} ${path} → ${status} ${text.slice(0, 200)}`);
        else if (!(String(status) in responses)) undocumented.push(`${method.toUpperCase()} ${path} → ${status} (document lists ${Object.keys(responses)})`);
      }
      expect(undocumented).toEqual([]);
    });
  }
});
