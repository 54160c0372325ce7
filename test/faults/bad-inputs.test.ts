import { createHmac } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { gzipSync } from 'node:zlib';
import { ERROR_CODES, ERROR_STATUS, type ErrorCode } from '@sluice/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentialsFile, keyHeader, rawKey, WILDCARD_GRANT } from '../support/credentials.js';
import { BACKENDS, postJson, requestJson, sampleAction, startGateway, type RunningGateway } from '../support/start-gateway.js';
import { parseStrictJson } from '../support/strict-json.js';

/**
 * Issue 18, "fault suite": a table of hostile and malformed requests, one row each, against the
 * HTTP API on both backends. Every row must be refused with a 4xx whose body is our JSON error
 * `{error, code}` (an UPPER_SNAKE code of the registry, never Fastify's `FST_…`), the server must
 * still answer `/health` afterwards, and the whole corpus together must change nothing: the audit
 * trail, rules, silences, quotas (and a quota's usage) and recurring actions are snapshotted before
 * and compared after.
 *
 * Not repeated here (see those files): nesting past `server.max_json_depth` on a dispatch payload
 * (test/integration/hardening.test.ts); `limit` 0/1001/-1/100000 on every list, two Authorization
 * or X-API-Key headers, `%zz` / `%E0%A4%A` and over-long ids on `/v1/audit/:id`, an empty or
 * `{"a":` dispatch body, text/xml, text/plain and `json` content types, non-UTF-8 charsets on a
 * dispatch, garbled request lines, headers over 16 KiB, and cron fields out of range
 * (test/integration/validation-edges.test.ts). The rows below take the same faults to other routes.
 *
 * Inputs the docs say are accepted are left out of the table: unknown top-level fields of a dispatch
 * ("ignored", docs/dispatch.md), a UTF-8 byte-order mark (one; RFC 8259 lets a parser ignore it), a
 * malformed `traceparent` (only a valid one is used) and an X-Request-Id over 128 characters (a
 * fresh id is generated instead; docs/operations.md). The last two are asserted as documented below.
 */

type Json = Record<string, unknown>;

/** A body sent byte for byte (a string or bytes), as opposed to a value sent as JSON. */
class Raw {
  constructor(
    readonly bytes: string | Buffer,
    readonly contentType: string | null = 'application/json',
  ) {}
}

interface Req {
  method: string;
  /** Sent as is: no URL normalisation, so `%2e%2e`, `%00` and broken escapes reach the server. */
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
  /** Sent with `Transfer-Encoding: chunked`, without a Content-Length. */
  chunked?: boolean;
}

/** One row: a name, the request, and the code (hence the status) it must be refused with. */
type Row = readonly [name: string, req: Req, code: ErrorCode];

const get = (path: string, headers?: Record<string, string>): Req => ({ method: 'GET', path, ...(headers ? { headers } : {}) });
const del = (path: string): Req => ({ method: 'DELETE', path });
const post = (path: string, body?: unknown, headers?: Record<string, string>): Req => ({ method: 'POST', path, body, ...(headers ? { headers } : {}) });
const put = (path: string, body: unknown): Req => ({ method: 'PUT', path, body });
const raw = (text: string | Buffer, contentType: string | null = 'application/json') => new Raw(text, contentType);

/** The scope every row works in, and the state seeded there before the corpus runs. */
const NS = 'payments';
const T = 'faults';
const SCOPE = `namespace=${NS}&tenant=${T}`;
const SEED_RULE = 'fault-seed';
const SEED_QUOTA = 'fault-seed';
/** Filled in at run time with the ids the gateway gave the seeded silence and recurring action. */
const SILENCE = '{silence}';
const RECURRING = '{recurring}';

const act = (overrides: Json = {}) => sampleAction({ tenant: T, ...overrides });
/** A valid dispatch body as text, and that text with one edit (sent as is). */
const ACT = JSON.stringify(act());
const edit = (from: string | RegExp, to: string) => raw(ACT.replace(from, to));
/** A dispatch body whose tenant is these bytes, as they are (not necessarily UTF-8). */
const actWithTenantBytes = (...bytes: number[]) => {
  const [head = '', tail = ''] = JSON.stringify(act({ tenant: '@' })).split('@');
  return raw(Buffer.concat([Buffer.from(head), Buffer.from(bytes), Buffer.from(tail)]));
};
const long = (n: number) => 'x'.repeat(n);
const nestedCondition = (levels: number): Json => {
  let c: Json = { field: 'action.tenant', eq: 'x' };
  for (let i = 0; i < levels; i++) c = { all: [c] };
  return c;
};
const cel = (expression: string) => ({ name: 'fault-cel', priority: 5, expression, action: { type: 'suppress' } });
/** A field test with an operator no rule knows. */
const LIKE = { field: 'action.tenant', like: 'x' };
const rule = (overrides: Json = {}) => ({
  name: 'fault-rule',
  priority: 5,
  condition: { field: 'action.tenant', eq: 'nobody' },
  action: { type: 'suppress' },
  ...overrides,
});
const silence = (overrides: Json = {}) => ({
  namespace: NS,
  tenant: T,
  matchers: [{ name: 'fault', op: 'equal', value: 'never' }],
  comment: 'fault suite',
  duration_seconds: 3600,
  ...overrides,
});
const quota = (overrides: Json = {}) => ({ id: 'fault-quota', namespace: NS, tenant: T, max_actions: 10, window: 'daily', ...overrides });
const recurring = (overrides: Json = {}) => ({
  namespace: NS,
  tenant: T,
  cron_expr: '0 0 1 1 *',
  provider: 'email',
  action_type: 'send',
  payload: {},
  ...overrides,
});

/** Values no scope or routing name may take (docs/dispatch.md: a string of 1–256 characters, no control or bidirectional characters, not . or ..). */
const BAD_NAMES: [string, unknown][] = [
  ['a number', 42],
  ['an array', ['acme']],
  ['an object', { name: 'acme' }],
  ['null', null],
  ['an empty string', ''],
  ['1000 characters', long(1000)],
  ['a NUL', 'ac\u0000me'],
  ['a newline', 'ac\nme'],
  ['an 8-bit CSI (C1 control)', 'ac\u009bme'],
  ['a right-to-left override', 'send\u202egnp.exe'],
  ['a bidirectional isolate', 'wire\u2066exe'],
  ['.', '.'],
  ['..', '..'],
];
const NAME_FIELDS = ['namespace', 'tenant', 'provider', 'action_type', 'id'] as const;

const JSON_BODIES: Row[] = [
  ['truncated', post('/v1/dispatch', raw('{"namespace":"payments","tenant":')), 'INVALID_JSON'],
  ['trailing garbage', post('/v1/dispatch', raw(`${ACT}xyz`)), 'INVALID_JSON'],
  ['two documents', post('/v1/dispatch', raw(`${ACT}${ACT}`)), 'INVALID_JSON'],
  ['NaN', post('/v1/dispatch', edit('"payload":{', '"payload":{"n":NaN,')), 'INVALID_JSON'],
  ['Infinity', post('/v1/dispatch', edit('"payload":{', '"payload":{"n":Infinity,')), 'INVALID_JSON'],
  ['-Infinity', post('/v1/dispatch', edit('"payload":{', '"payload":{"n":-Infinity,')), 'INVALID_JSON'],
  ['single quotes', post('/v1/dispatch', raw(ACT.replaceAll('"', "'"))), 'INVALID_JSON'],
  ['trailing comma', post('/v1/dispatch', edit(/}$/, ',}')), 'INVALID_JSON'],
  ['a comment', post('/v1/dispatch', raw(`/* hi */${ACT}`)), 'INVALID_JSON'],
  ['UTF-16LE with its BOM', post('/v1/dispatch', raw(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(ACT, 'utf16le')]))), 'INVALID_JSON'],
  ['a raw control character in a string', post('/v1/dispatch', edit('"faults"', '"fau\u0001lts"')), 'INVALID_JSON'],
  ['a raw newline in a string', post('/v1/dispatch', edit('"faults"', '"fau\nlts"')), 'INVALID_JSON'],
  ['a lone surrogate in tenant', post('/v1/dispatch', edit('"faults"', '"faults\\ud800"')), 'BAD_REQUEST'],
  ['a reversed surrogate pair in provider', post('/v1/dispatch', edit('"email"', '"em\\udfff\\ud800ail"')), 'BAD_REQUEST'],
  ['a lone surrogate in a silence namespace', post('/v1/silences', raw(JSON.stringify(silence()).replace('"payments"', '"\\udc00"'))), 'BAD_REQUEST'],
  ['a lone surrogate in a quota tenant', post('/v1/quotas', raw(JSON.stringify(quota()).replace('"faults"', '"faults\\ud83d"'))), 'BAD_REQUEST'],
  ['duplicate keys, the last one invalid', post('/v1/dispatch', edit(/}$/, ',"tenant":5}')), 'VALIDATION_FAILED'],
  ['__proto__ at the top', post('/v1/dispatch', edit(/^{/, '{"__proto__":{"admin":true},')), 'VALIDATION_FAILED'],
  ['__proto__ in the payload', post('/v1/dispatch', edit('"payload":{', '"payload":{"__proto__":{"x":1},')), 'VALIDATION_FAILED'],
  ['constructor.prototype in the payload', post('/v1/dispatch', act({ payload: { constructor: { prototype: { polluted: true } } } })), 'VALIDATION_FAILED'],
  ['invalid UTF-8 in a string', post('/v1/dispatch', actWithTenantBytes(0x66, 0xff, 0x66)), 'INVALID_JSON'],
  ['an overlong "/" (C0 AF)', post('/v1/dispatch', actWithTenantBytes(0x61, 0xc0, 0xaf, 0x62)), 'INVALID_JSON'],
  ['a surrogate encoded in UTF-8 (ED A0 80)', post('/v1/dispatch', actWithTenantBytes(0x61, 0xed, 0xa0, 0x80)), 'INVALID_JSON'],
  ['Latin-1 bytes declared as UTF-8', post('/v1/dispatch', actWithTenantBytes(0x63, 0x61, 0x66, 0xe9)), 'INVALID_JSON'],
  ['a UTF-8 sequence cut short', post('/v1/dispatch', actWithTenantBytes(0x61, 0xe2, 0x82)), 'INVALID_JSON'],
  ['2 MB (over max_body_bytes)', post('/v1/dispatch', act({ payload: { blob: long(2 * 1024 * 1024) } })), 'PAYLOAD_TOO_LARGE'],
  ['2 MB chunked, no Content-Length', { ...post('/v1/dispatch', act({ payload: { blob: long(2 * 1024 * 1024) } })), chunked: true }, 'PAYLOAD_TOO_LARGE'],
  ['gzip-encoded', post('/v1/dispatch', raw(gzipSync(ACT)), { 'content-encoding': 'gzip' }), 'INVALID_JSON'],
  ['a byte-order mark and nothing else', post('/v1/dispatch', raw('\ufeff')), 'INVALID_JSON'],
  ['two byte-order marks', post('/v1/dispatch', raw(`\ufeff\ufeff${ACT}`)), 'INVALID_JSON'],
  ['whitespace only', post('/v1/dispatch', raw('  \n\t ')), 'INVALID_JSON'],
  ['null', post('/v1/dispatch', raw('null')), 'VALIDATION_FAILED'],
  ['a string', post('/v1/dispatch', 'hello'), 'VALIDATION_FAILED'],
  ['a number', post('/v1/dispatch', raw('42')), 'VALIDATION_FAILED'],
  ['an array', post('/v1/dispatch', [act()]), 'VALIDATION_FAILED'],
  ['empty, on a rule create', post('/v1/rules', raw('')), 'INVALID_JSON'],
  ['truncated, on a silence create', post('/v1/silences', raw('{"namespace":')), 'INVALID_JSON'],
  ['form-encoded', post('/v1/dispatch', raw('namespace=payments&tenant=faults', 'application/x-www-form-urlencoded')), 'UNSUPPORTED_MEDIA_TYPE'],
  ['multipart', post('/v1/dispatch', raw('--b\r\n\r\n--b--', 'multipart/form-data; boundary=b')), 'UNSUPPORTED_MEDIA_TYPE'],
  ['application/jsonx', post('/v1/dispatch', raw(ACT, 'application/jsonx')), 'UNSUPPORTED_MEDIA_TYPE'],
  ['a body without a content type', post('/v1/dispatch', raw(ACT, null)), 'UNSUPPORTED_MEDIA_TYPE'],
  ['charset=latin1, on a quota create', post('/v1/quotas', raw(JSON.stringify(quota()), 'application/json; charset=latin1')), 'UNSUPPORTED_MEDIA_TYPE'],
  ['charset=iso-8859-1, on a silence', post('/v1/silences', raw(JSON.stringify(silence()), 'application/json; charset=iso-8859-1')), 'UNSUPPORTED_MEDIA_TYPE'],
];

const DISPATCH: Row[] = [
  ['an empty object', post('/v1/dispatch', {}), 'VALIDATION_FAILED'],
  ['no payload', post('/v1/dispatch', { ...act(), payload: undefined }), 'VALIDATION_FAILED'],
  ...NAME_FIELDS.flatMap((field) =>
    BAD_NAMES.map(([label, value]): Row => [`${field} as ${label}`, post('/v1/dispatch', act({ [field]: value })), 'VALIDATION_FAILED']),
  ),
  ['payload as an array', post('/v1/dispatch', act({ payload: [1, 2] })), 'VALIDATION_FAILED'],
  ['payload as a string', post('/v1/dispatch', act({ payload: 'x' })), 'VALIDATION_FAILED'],
  ['payload as null', post('/v1/dispatch', act({ payload: null })), 'VALIDATION_FAILED'],
  ['payload as a number', post('/v1/dispatch', act({ payload: 1 })), 'VALIDATION_FAILED'],
  ['metadata as an array', post('/v1/dispatch', act({ metadata: ['a'] })), 'VALIDATION_FAILED'],
  ['metadata as a string', post('/v1/dispatch', act({ metadata: 'env=prod' })), 'VALIDATION_FAILED'],
  ['a label as a number', post('/v1/dispatch', act({ metadata: { labels: { env: 1 } } })), 'VALIDATION_FAILED'],
  ['a label as null', post('/v1/dispatch', act({ metadata: { labels: { env: null } } })), 'VALIDATION_FAILED'],
  ['a label as an object', post('/v1/dispatch', act({ metadata: { labels: { env: { a: 'b' } } } })), 'VALIDATION_FAILED'],
  ['labels as an array', post('/v1/dispatch', act({ metadata: { labels: ['env'] } })), 'VALIDATION_FAILED'],
  ['created_at "yesterday"', post('/v1/dispatch', act({ created_at: 'yesterday' })), 'VALIDATION_FAILED'],
  ['created_at a date only', post('/v1/dispatch', act({ created_at: '2024-01-01' })), 'VALIDATION_FAILED'],
  ['created_at without an offset', post('/v1/dispatch', act({ created_at: '2024-01-01T00:00:00' })), 'VALIDATION_FAILED'],
  ['created_at in month 13', post('/v1/dispatch', act({ created_at: '2024-13-01T00:00:00Z' })), 'VALIDATION_FAILED'],
  ['created_at as epoch seconds', post('/v1/dispatch', act({ created_at: 1_700_000_000 })), 'VALIDATION_FAILED'],
  ['starts_at "soon"', post('/v1/dispatch', act({ starts_at: 'soon' })), 'VALIDATION_FAILED'],
  ['dedup_key as a number', post('/v1/dispatch', act({ dedup_key: 12 })), 'VALIDATION_FAILED'],
  ['dedup_key as an object', post('/v1/dispatch', act({ dedup_key: { k: 1 } })), 'VALIDATION_FAILED'],
  ['dedup_key empty', post('/v1/dispatch', act({ dedup_key: '' })), 'VALIDATION_FAILED'],
  ['dedup_key of 2000 characters', post('/v1/dispatch', act({ dedup_key: long(2000) })), 'VALIDATION_FAILED'],
  ['status as a number', post('/v1/dispatch', act({ status: 3 })), 'VALIDATION_FAILED'],
  ['fingerprint as an array', post('/v1/dispatch', act({ fingerprint: ['a'] })), 'VALIDATION_FAILED'],
  ['?dry_run=maybe', post('/v1/dispatch?dry_run=maybe', act()), 'VALIDATION_FAILED'],
  ['?dry_run given twice', post('/v1/dispatch?dry_run=true&dry_run=false', act()), 'VALIDATION_FAILED'],
  ['?dry_run empty', post('/v1/dispatch?dry_run=', act()), 'VALIDATION_FAILED'],
];

const BATCH: Row[] = [
  ['no actions', post('/v1/dispatch/batch', { actions: [] }), 'VALIDATION_FAILED'],
  ['a bare empty array', post('/v1/dispatch/batch', []), 'VALIDATION_FAILED'],
  ['1001 actions', post('/v1/dispatch/batch', { actions: Array.from({ length: 1001 }, () => act()) }), 'VALIDATION_FAILED'],
  ['actions as a string', post('/v1/dispatch/batch', { actions: 'all' }), 'VALIDATION_FAILED'],
  ['actions as an object', post('/v1/dispatch/batch', { actions: { 0: act() } }), 'VALIDATION_FAILED'],
  ['actions as null', post('/v1/dispatch/batch', { actions: null }), 'VALIDATION_FAILED'],
  ['no actions key', post('/v1/dispatch/batch', { items: [act()] }), 'VALIDATION_FAILED'],
  ['valid actions then an invalid one', post('/v1/dispatch/batch', { actions: [act(), act(), act({ tenant: 5 })] }), 'VALIDATION_FAILED'],
  ['a bare array with an invalid item', post('/v1/dispatch/batch', [act(), act({ payload: null })]), 'VALIDATION_FAILED'],
  ['an item that is an array', post('/v1/dispatch/batch', { actions: [[act()]] }), 'VALIDATION_FAILED'],
  ['?dry_run=maybe', post('/v1/dispatch/batch?dry_run=maybe', { actions: [act()] }), 'VALIDATION_FAILED'],
];

/** `{"v":1,"k":"ts",…}` as a cursor, the shape the audit store encodes (libs/audit/src/query-cursor.ts). */
const cursor = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const RECORD_ID = '0190a8f4-1c2d-7e3f-8a4b-5c6d7e8f9a0b';
const GOOD_CURSOR = cursor({ v: 1, k: 'ts', t: 1_700_000_000_000, i: RECORD_ID });

const AUDIT: Row[] = [
  ['limit=abc', get(`/v1/audit?tenant=${T}&limit=abc`), 'VALIDATION_FAILED'],
  ['limit=1.5', get(`/v1/audit?tenant=${T}&limit=1.5`), 'VALIDATION_FAILED'],
  ['limit=NaN', get(`/v1/audit?tenant=${T}&limit=NaN`), 'VALIDATION_FAILED'],
  ['limit=1e400', get(`/v1/audit?tenant=${T}&limit=1e400`), 'VALIDATION_FAILED'],
  ['limit=-1e400', get(`/v1/audit?tenant=${T}&limit=-1e400`), 'VALIDATION_FAILED'],
  ['limit=Infinity', get(`/v1/audit?tenant=${T}&limit=Infinity`), 'VALIDATION_FAILED'],
  ['limit given twice', get(`/v1/audit?tenant=${T}&limit=10&limit=20`), 'VALIDATION_FAILED'],
  ['tenant given twice', get(`/v1/audit?tenant=${T}&tenant=other`), 'VALIDATION_FAILED'],
  ['offset=-1', get(`/v1/audit?tenant=${T}&offset=-1`), 'VALIDATION_FAILED'],
  ['offset=abc', get(`/v1/audit?tenant=${T}&offset=abc`), 'VALIDATION_FAILED'],
  ['offset=1e400', get(`/v1/audit?tenant=${T}&offset=1e400`), 'VALIDATION_FAILED'],
  ['a random base64 cursor', get(`/v1/audit?tenant=${T}&cursor=${Buffer.from('3q2+7wAAAP//', 'base64').toString('base64url')}`), 'BAD_REQUEST'],
  ['a truncated cursor', get(`/v1/audit?tenant=${T}&cursor=${GOOD_CURSOR.slice(0, 20)}`), 'BAD_REQUEST'],
  ['a cursor of valid JSON, wrong shape', get(`/v1/audit?tenant=${T}&cursor=${cursor({ v: 2, k: 'ts', t: 'now', i: 'x' })}`), 'BAD_REQUEST'],
  ['a cursor with a bad record id', get(`/v1/audit?tenant=${T}&cursor=${cursor({ v: 1, k: 'ts', t: 1, i: '../../etc' })}`), 'BAD_REQUEST'],
  ['a cursor with a negative skip', get(`/v1/audit?tenant=${T}&cursor=${cursor({ v: 1, k: 'ts', t: 1, i: RECORD_ID, s: -5 })}`), 'BAD_REQUEST'],
  ['a cursor over 1024 characters', get(`/v1/audit?tenant=${T}&cursor=${long(1100)}`), 'VALIDATION_FAILED'],
  ['from=yesterday', get(`/v1/audit?tenant=${T}&from=yesterday`), 'VALIDATION_FAILED'],
  ['from in month 13', get(`/v1/audit?tenant=${T}&from=2024-13-01T00:00:00Z`), 'VALIDATION_FAILED'],
  ['from on February 30', get(`/v1/audit?tenant=${T}&from=2024-02-30T00:00:00Z`), 'VALIDATION_FAILED'],
  ['from without an offset', get(`/v1/audit?tenant=${T}&from=2024-01-01T00:00:00`), 'VALIDATION_FAILED'],
  ['to as epoch ms', get(`/v1/audit?tenant=${T}&to=1700000000000`), 'VALIDATION_FAILED'],
  ['from after to', get(`/v1/audit?tenant=${T}&from=2025-01-02T00:00:00Z&to=2025-01-01T00:00:00Z`), 'BAD_REQUEST'],
  ['bulk replay from=garbage', post(`/v1/audit/replay?tenant=${T}&from=garbage`), 'VALIDATION_FAILED'],
  ['bulk replay from after to', post(`/v1/audit/replay?tenant=${T}&from=2030-01-01T00:00:00Z&to=2020-01-01T00:00:00Z`), 'BAD_REQUEST'],
  ['verify without a scope', post('/v1/audit/verify', {}), 'VALIDATION_FAILED'],
  ['verify with hash chaining off', post('/v1/audit/verify', { namespace: NS, tenant: T }), 'BAD_REQUEST'],
];

const PATHS: Row[] = [
  ['audit record %00', get('/v1/audit/%00'), 'NOT_FOUND'],
  ['replay of %00', post('/v1/audit/%00/replay'), 'NOT_FOUND'],
  ['replay of ..%2f..%2fv1%2fdispatch', post('/v1/audit/..%2f..%2fv1%2fdispatch/replay'), 'NOT_FOUND'],
  ['audit record %ff (not UTF-8)', get('/v1/audit/%ff'), 'BAD_REQUEST'],
  ['audit record %ED%A0%80 (an encoded surrogate)', get('/v1/audit/%ED%A0%80'), 'BAD_REQUEST'],
  ['rule %00', get('/v1/rules/%00'), 'NOT_FOUND'],
  ['delete rule ..%2f..%2fv1%2frules', del('/v1/rules/..%2f..%2fv1%2frules'), 'NOT_FOUND'],
  ['delete rule of 300 characters', del(`/v1/rules/${long(300)}`), 'VALIDATION_FAILED'],
  ['delete rule of 2000 characters', del(`/v1/rules/${long(2000)}`), 'BAD_REQUEST'],
  ['delete rule %ZZ', del('/v1/rules/%ZZ'), 'BAD_REQUEST'],
  ['enable rule %E0%A4%A', put('/v1/rules/%E0%A4%A/enabled', { enabled: false }), 'BAD_REQUEST'],
  ['delete silence %00', del('/v1/silences/%00'), 'NOT_FOUND'],
  ['extend silence %2e%2e', post('/v1/silences/%2e%2e/extend', { minutes: 5 }), 'NOT_FOUND'],
  ['expire silence of 300 characters', post(`/v1/silences/${long(300)}/expire`), 'VALIDATION_FAILED'],
  ['expire silence of 2000 characters', post(`/v1/silences/${long(2000)}/expire`), 'BAD_REQUEST'],
  ['get silence %E0%A4%A', get('/v1/silences/%E0%A4%A'), 'BAD_REQUEST'],
  ['delete quota %00', del('/v1/quotas/%00'), 'NOT_FOUND'],
  ['update quota of 300 characters', put(`/v1/quotas/${long(300)}`, { max_actions: 5 }), 'VALIDATION_FAILED'],
  ['quota usage ..%2f', get('/v1/quotas/..%2f/usage'), 'NOT_FOUND'],
  ['delete recurring %00', del(`/v1/recurring/%00?${SCOPE}`), 'NOT_FOUND'],
  ['pause recurring of 300 characters', post(`/v1/recurring/${long(300)}/pause?${SCOPE}`), 'VALIDATION_FAILED'],
  ['PATCH on dispatch', { method: 'PATCH', path: '/v1/dispatch', body: act() }, 'NOT_FOUND'],
  ['DELETE on the audit trail', del('/v1/audit'), 'NOT_FOUND'],
];

const RULES: Row[] = [
  ['an empty object', post('/v1/rules', {}), 'VALIDATION_FAILED'],
  ['no name', post('/v1/rules', { ...rule(), name: undefined }), 'VALIDATION_FAILED'],
  ['an empty name', post('/v1/rules', rule({ name: '' })), 'VALIDATION_FAILED'],
  ['a name that is a number', post('/v1/rules', rule({ name: 7 })), 'VALIDATION_FAILED'],
  ['an unknown operator', post('/v1/rules', rule({ condition: LIKE })), 'VALIDATION_FAILED'],
  ['two operators in one test', post('/v1/rules', rule({ condition: { field: 'action.tenant', eq: 'a', ne: 'b' } })), 'VALIDATION_FAILED'],
  ['an unknown field path', post('/v1/rules', rule({ condition: { field: 'action.nowhere', eq: 'a' } })), 'VALIDATION_FAILED'],
  ['a regex that does not compile', post('/v1/rules', rule({ condition: { field: 'action.tenant', matches: '(unclosed' } })), 'VALIDATION_FAILED'],
  ['a backreference (not RE2)', post('/v1/rules', rule({ condition: { field: 'action.tenant', matches: '(a)\\1' } })), 'VALIDATION_FAILED'],
  ['a regex over 1024 characters', post('/v1/rules', rule({ condition: { field: 'action.tenant', matches: long(1025) } })), 'VALIDATION_FAILED'],
  ['a CEL syntax error', post('/v1/rules', cel('action.tenant == ')), 'VALIDATION_FAILED'],
  ['a CEL expression of an unknown function', post('/v1/rules', cel('explode(action.tenant)')), 'VALIDATION_FAILED'],
  ["CEL's matches()", post('/v1/rules', cel('action.tenant.matches("a+")')), 'VALIDATION_FAILED'],
  ['an unknown action type', post('/v1/rules', rule({ action: { type: 'explode' } })), 'VALIDATION_FAILED'],
  ['no action', post('/v1/rules', { ...rule(), action: undefined }), 'VALIDATION_FAILED'],
  ['priority 2^31', post('/v1/rules', rule({ priority: 2 ** 31 })), 'VALIDATION_FAILED'],
  ['priority -2^31-1', post('/v1/rules', rule({ priority: -(2 ** 31) - 1 })), 'VALIDATION_FAILED'],
  ['priority 1.5', post('/v1/rules', rule({ priority: 1.5 })), 'VALIDATION_FAILED'],
  ['priority 1e999', post('/v1/rules', raw(JSON.stringify(rule()).replace('"priority":5', '"priority":1e999'))), 'BAD_REQUEST'],
  ['priority "high"', post('/v1/rules', rule({ priority: 'high' })), 'VALIDATION_FAILED'],
  ['a condition nested 20 deep (over 16)', post('/v1/rules', rule({ condition: nestedCondition(20) })), 'VALIDATION_FAILED'],
  ['a condition nested 100 deep (over max_json_depth)', post('/v1/rules', rule({ condition: nestedCondition(100) })), 'BAD_REQUEST'],
  ['throttle max_count 0', post('/v1/rules', rule({ action: { type: 'throttle', max_count: 0, window_seconds: 60 } })), 'VALIDATION_FAILED'],
  ['deduplicate ttl over 30 days', post('/v1/rules', rule({ action: { type: 'deduplicate', ttl_seconds: 2_592_001 } })), 'VALIDATION_FAILED'],
  ['a body that is an array', post('/v1/rules', [rule()]), 'VALIDATION_FAILED'],
  ['a body that is null', post('/v1/rules', raw('null')), 'VALIDATION_FAILED'],
  ['a name of 300 characters', post('/v1/rules', rule({ name: long(300) })), 'VALIDATION_FAILED'],
  ['a name with a newline', put('/v1/rules/a%0Ab', rule({ name: 'a\nb' })), 'VALIDATION_FAILED'],
  ['enabled "yes"', post('/v1/rules', rule({ enabled: 'yes' })), 'VALIDATION_FAILED'],
  ['a body name that differs from the path', put(`/v1/rules/${SEED_RULE}`, rule({ name: 'another-name' })), 'BAD_REQUEST'],
  ['the seeded rule again (a duplicate name)', post('/v1/rules', rule({ name: SEED_RULE })), 'CONFLICT'],
  ['replace the seeded rule with a bad operator', put(`/v1/rules/${SEED_RULE}`, rule({ name: SEED_RULE, condition: LIKE })), 'VALIDATION_FAILED'],
  ['enable the seeded rule with "yes"', put(`/v1/rules/${SEED_RULE}/enabled`, { enabled: 'yes' }), 'VALIDATION_FAILED'],
  ['enable an unknown rule', put('/v1/rules/no-such-rule/enabled', { enabled: false }), 'NOT_FOUND'],
  ['delete an unknown rule', del('/v1/rules/no-such-rule'), 'NOT_FOUND'],
  ['playground with tenant 5', post('/v1/rules/evaluate', act({ tenant: 5 })), 'VALIDATION_FAILED'],
];

const BACKWARDS = { starts_at: '2030-01-02T00:00:00Z', ends_at: '2030-01-01T00:00:00Z' };

const SILENCES: Row[] = [
  ['an unknown matcher op', post('/v1/silences', silence({ matchers: [{ name: 'env', op: 'like', value: 'prod' }] })), 'VALIDATION_FAILED'],
  ['no matchers', post('/v1/silences', silence({ matchers: [] })), 'VALIDATION_FAILED'],
  ['65 matchers', post('/v1/silences', silence({ matchers: Array.from({ length: 65 }, (_, i) => ({ name: `l${i}`, value: 'v' })) })), 'VALIDATION_FAILED'],
  ['a matcher without a name', post('/v1/silences', silence({ matchers: [{ name: '', value: 'v' }] })), 'VALIDATION_FAILED'],
  ['a matcher with an unknown key', post('/v1/silences', silence({ matchers: [{ name: 'env', value: 'v', negate: true }] })), 'VALIDATION_FAILED'],
  ['a negative duration', post('/v1/silences', silence({ duration_seconds: -60 })), 'VALIDATION_FAILED'],
  ['a zero duration', post('/v1/silences', silence({ duration_seconds: 0 })), 'VALIDATION_FAILED'],
  ['a duration of 1e999', post('/v1/silences', raw(JSON.stringify(silence()).replace('3600', '1e999'))), 'BAD_REQUEST'],
  ['a duration over a year', post('/v1/silences', silence({ duration_seconds: 366 * 86_400 })), 'VALIDATION_FAILED'],
  ['neither ends_at nor a duration', post('/v1/silences', silence({ duration_seconds: undefined })), 'BAD_REQUEST'],
  ['ends_at before starts_at', post('/v1/silences', silence({ duration_seconds: undefined, ...BACKWARDS })), 'BAD_REQUEST'],
  ['a regex over 256 characters', post('/v1/silences', silence({ matchers: [{ name: 'env', op: 'regex', value: long(257) }] })), 'VALIDATION_FAILED'],
  ['a regex that does not compile', post('/v1/silences', silence({ matchers: [{ name: 'env', op: 'not_regex', value: '[a-' }] })), 'VALIDATION_FAILED'],
  ['no comment', post('/v1/silences', silence({ comment: undefined })), 'VALIDATION_FAILED'],
  ['a blank comment', post('/v1/silences', silence({ comment: '   ' })), 'VALIDATION_FAILED'],
  ['an unknown field', post('/v1/silences', silence({ provider: 'email' })), 'VALIDATION_FAILED'],
  ['a tenant with a newline', post('/v1/silences', silence({ tenant: 'fau\nlts' })), 'VALIDATION_FAILED'],
  ['update the seeded one with matchers', put(`/v1/silences/${SILENCE}`, { matchers: [{ name: 'env', value: 'x' }] }), 'VALIDATION_FAILED'],
  ['update the seeded one with a bad ends_at', put(`/v1/silences/${SILENCE}`, { ends_at: 'tomorrow' }), 'VALIDATION_FAILED'],
  ['extend the seeded one by 0 minutes', post(`/v1/silences/${SILENCE}/extend`, { minutes: 0 }), 'VALIDATION_FAILED'],
  ['extend the seeded one by -5 minutes', post(`/v1/silences/${SILENCE}/extend`, { minutes: -5 }), 'VALIDATION_FAILED'],
  ['extend the seeded one by 1e999 minutes', post(`/v1/silences/${SILENCE}/extend`, raw('{"minutes":1e999}')), 'BAD_REQUEST'],
  ['extend an unknown one', post('/v1/silences/no-such-silence/extend', { minutes: 5 }), 'NOT_FOUND'],
  ['?include_expired=maybe', get('/v1/silences?include_expired=maybe'), 'VALIDATION_FAILED'],
];

const QUOTAS: Row[] = [
  ['an unknown window', post('/v1/quotas', quota({ window: 'yearly' })), 'VALIDATION_FAILED'],
  ['no window', post('/v1/quotas', quota({ window: undefined })), 'VALIDATION_FAILED'],
  ['max_actions 0', post('/v1/quotas', quota({ max_actions: 0 })), 'VALIDATION_FAILED'],
  ['max_actions -1', post('/v1/quotas', quota({ max_actions: -1 })), 'VALIDATION_FAILED'],
  ['max_actions 1.5', post('/v1/quotas', quota({ max_actions: 1.5 })), 'VALIDATION_FAILED'],
  ['max_actions over 10^9', post('/v1/quotas', quota({ max_actions: 10_000_000_000 })), 'VALIDATION_FAILED'],
  ['max_actions 1e999', post('/v1/quotas', raw(JSON.stringify(quota()).replace('"max_actions":10', '"max_actions":1e999'))), 'BAD_REQUEST'],
  ['max_actions as a string', post('/v1/quotas', quota({ max_actions: '10' })), 'VALIDATION_FAILED'],
  ['an unknown field (provider)', post('/v1/quotas', quota({ provider: 'email' })), 'VALIDATION_FAILED'],
  ['an empty tenant', post('/v1/quotas', quota({ tenant: '' })), 'VALIDATION_FAILED'],
  ['a namespace with a NUL', post('/v1/quotas', quota({ namespace: 'pay\u0000ments' })), 'VALIDATION_FAILED'],
  ['an unknown overage behaviour', post('/v1/quotas', quota({ overage_behavior: 'explode' })), 'VALIDATION_FAILED'],
  ['enabled "yes"', post('/v1/quotas', quota({ enabled: 'yes' })), 'VALIDATION_FAILED'],
  ['an id of 300 characters', post('/v1/quotas', quota({ id: long(300) })), 'VALIDATION_FAILED'],
  ['the seeded id again', post('/v1/quotas', quota({ id: SEED_QUOTA })), 'CONFLICT'],
  ['update the seeded one to max_actions 0', put(`/v1/quotas/${SEED_QUOTA}`, { max_actions: 0 }), 'VALIDATION_FAILED'],
  ['update the seeded one with a new tenant', put(`/v1/quotas/${SEED_QUOTA}`, { tenant: 'other' }), 'VALIDATION_FAILED'],
  ['update an unknown one', put('/v1/quotas/no-such-quota', { max_actions: 5 }), 'NOT_FOUND'],
  ['delete an unknown one', del('/v1/quotas/no-such-quota'), 'NOT_FOUND'],
];

const RECURRING_ROWS: Row[] = [
  ['a cron that is prose', post('/v1/recurring', recurring({ cron_expr: 'every day at noon' })), 'BAD_REQUEST'],
  ['a cron that never fires (February 30)', post('/v1/recurring', recurring({ cron_expr: '0 0 30 2 *' })), 'BAD_REQUEST'],
  ['a cron of 6 fields', post('/v1/recurring', recurring({ cron_expr: '0 0 0 1 1 *' })), 'BAD_REQUEST'],
  ['an empty cron', post('/v1/recurring', recurring({ cron_expr: '' })), 'VALIDATION_FAILED'],
  ['no cron', post('/v1/recurring', recurring({ cron_expr: undefined })), 'BAD_REQUEST'],
  ['timezone Mars/Phobos', post('/v1/recurring', recurring({ timezone: 'Mars/Phobos' })), 'BAD_REQUEST'],
  ['an empty timezone', post('/v1/recurring', recurring({ timezone: '' })), 'VALIDATION_FAILED'],
  ['no scope anywhere', post('/v1/recurring', recurring({ namespace: undefined, tenant: undefined })), 'BAD_REQUEST'],
  ['a scope in body and query that differ', post('/v1/recurring?tenant=other', recurring()), 'BAD_REQUEST'],
  ['an end_date in the past', post('/v1/recurring', recurring({ end_date: '2001-01-01T00:00:00Z' })), 'BAD_REQUEST'],
  ['max_executions 0', post('/v1/recurring', recurring({ max_executions: 0 })), 'VALIDATION_FAILED'],
  ['an unknown field', post('/v1/recurring', recurring({ max_runs: 3 })), 'VALIDATION_FAILED'],
  ['payload as an array', post('/v1/recurring', recurring({ payload: [] })), 'VALIDATION_FAILED'],
  ['update the seeded one with a bad cron', put(`/v1/recurring/${RECURRING}?${SCOPE}`, { cron_expr: '61 * * * *' }), 'BAD_REQUEST'],
  ['update the seeded one to timezone Mars/Phobos', put(`/v1/recurring/${RECURRING}?${SCOPE}`, { timezone: 'Mars/Phobos' }), 'BAD_REQUEST'],
  ['pause the seeded one with a body of other keys', post(`/v1/recurring/${RECURRING}/pause?${SCOPE}`, { enabled: false }), 'VALIDATION_FAILED'],
  ['list without a scope', get('/v1/recurring'), 'VALIDATION_FAILED'],
  ['delete an unknown one', del(`/v1/recurring/no-such-recurring?${SCOPE}`), 'NOT_FOUND'],
];

const CORPUS: Row[] = [
  ...JSON_BODIES.map(([name, req, code]): Row => [`JSON: ${name}`, req, code]),
  ...DISPATCH.map(([name, req, code]): Row => [`dispatch: ${name}`, req, code]),
  ...BATCH.map(([name, req, code]): Row => [`batch: ${name}`, req, code]),
  ...AUDIT.map(([name, req, code]): Row => [`audit: ${name}`, req, code]),
  ...PATHS.map(([name, req, code]): Row => [`path: ${name}`, req, code]),
  ...RULES.map(([name, req, code]): Row => [`rules: ${name}`, req, code]),
  ...SILENCES.map(([name, req, code]): Row => [`silences: ${name}`, req, code]),
  ...QUOTAS.map(([name, req, code]): Row => [`quotas: ${name}`, req, code]),
  ...RECURRING_ROWS.map(([name, req, code]): Row => [`recurring: ${name}`, req, code]),
];

/** An HS256 JWT over `claims`, signed with `secret` (or unsigned, `alg: none`, when it is null). */
function jwt(claims: Json, secret: string | null): string {
  const part = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const head = `${part({ alg: secret === null ? 'none' : 'HS256', typ: 'JWT' })}.${part(claims)}`;
  return secret === null ? `${head}.` : `${head}.${createHmac('sha256', secret).update(head).digest('base64url')}`;
}
const NOW_S = Math.floor(Date.now() / 1000);
const CLAIMS = { sub: 'root', role: 'admin', iat: NOW_S, exp: NOW_S + 3600 };
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** Against a gateway with authentication on: keys for an admin, a viewer and an operator granted only tenant `alpha`. */
const AUTH_ROWS: Row[] = [
  ['no credentials', post('/v1/dispatch', act()), 'UNAUTHORIZED'],
  ['"Bearer" and no token', post('/v1/dispatch', act(), { authorization: 'Bearer' }), 'UNAUTHORIZED'],
  ['"Bearer " and spaces', post('/v1/dispatch', act(), { authorization: 'Bearer    ' }), 'UNAUTHORIZED'],
  ['a garbage bearer token', post('/v1/dispatch', act(), bearer('garbage')), 'UNAUTHORIZED'],
  ['an 8 KB bearer token', post('/v1/dispatch', act(), bearer(long(8192))), 'UNAUTHORIZED'],
  ['a key with a suffix', post('/v1/dispatch', act(), bearer(`${rawKey('root')}x`)), 'UNAUTHORIZED'],
  ['two tokens after Bearer', post('/v1/dispatch', act(), { authorization: `Bearer ${rawKey('root')} ${rawKey('root')}` }), 'UNAUTHORIZED'],
  ['a key without a scheme', post('/v1/dispatch', act(), { authorization: rawKey('root') }), 'UNAUTHORIZED'],
  ['Basic credentials', post('/v1/dispatch', act(), { authorization: `Basic ${Buffer.from('root:root').toString('base64')}` }), 'UNAUTHORIZED'],
  ['a JWT with alg none', post('/v1/dispatch', act(), bearer(jwt(CLAIMS, null))), 'UNAUTHORIZED'],
  ['a JWT signed with another secret', post('/v1/dispatch', act(), bearer(jwt(CLAIMS, 'not-the-secret-not-the-secret-not-the-secret'))), 'UNAUTHORIZED'],
  ['a JWT-shaped string of garbage', post('/v1/dispatch', act(), bearer('eyJ.eyJ.sig')), 'UNAUTHORIZED'],
  ['a garbage X-API-Key', post('/v1/dispatch', act(), { 'x-api-key': 'garbage' }), 'UNAUTHORIZED'],
  ['an empty X-API-Key', post('/v1/dispatch', act(), { 'x-api-key': '' }), 'UNAUTHORIZED'],
  ['a garbage token on a rule create', post('/v1/rules', rule(), bearer('garbage')), 'UNAUTHORIZED'],
  ['a garbage token on a quota create', post('/v1/quotas', quota(), bearer('garbage')), 'UNAUTHORIZED'],
  ['a garbage token on a bad body (auth first)', post('/v1/dispatch', raw('{"a":'), bearer('garbage')), 'UNAUTHORIZED'],
  ['a viewer dispatching', post('/v1/dispatch', act(), keyHeader('viewer')), 'FORBIDDEN'],
  ['a viewer creating a silence', post('/v1/silences', silence(), keyHeader('viewer')), 'FORBIDDEN'],
  ['alpha: dispatching for another tenant', post('/v1/dispatch', act(), keyHeader('alpha')), 'FORBIDDEN'],
  ['alpha: a batch, one item outside its grant', post('/v1/dispatch/batch', { actions: [act({ tenant: 'alpha' }), act()] }, keyHeader('alpha')), 'FORBIDDEN'],
  ['alpha: creating a rule (rules are global)', post('/v1/rules', rule(), keyHeader('alpha')), 'FORBIDDEN'],
  ['alpha: creating a quota (admin only)', post('/v1/quotas', quota({ tenant: 'alpha' }), keyHeader('alpha')), 'FORBIDDEN'],
  ['the admin with a bad body', post('/v1/dispatch', act({ tenant: [] }), keyHeader('root')), 'VALIDATION_FAILED'],
];

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/**
 * Sends one request over node:http, path and bytes as given (fetch would normalise `%2e%2e` and
 * cannot send a body without a content type). Resolves with whatever came back, also when the
 * server answered early (413) and closed the connection while the body was still being written.
 */
function send(baseUrl: string, req: Req): Promise<Answer> {
  const { hostname, port } = new URL(baseUrl);
  const body = req.body === undefined ? undefined : req.body instanceof Raw ? req.body.bytes : JSON.stringify(req.body);
  const contentType = req.body === undefined ? null : req.body instanceof Raw ? req.body.contentType : 'application/json';
  const headers: Record<string, string | number> = { ...(contentType ? { 'content-type': contentType } : {}), ...req.headers };
  if (req.chunked) headers['transfer-encoding'] = 'chunked';
  else if (body !== undefined) headers['content-length'] = Buffer.byteLength(body);
  return new Promise((resolve, reject) => {
    let answer: Answer | undefined;
    const chunks: Buffer[] = [];
    const finish = () => {
      if (answer) resolve({ ...answer, text: Buffer.concat(chunks).toString('utf8') });
    };
    const r = httpRequest({ host: hostname, port: Number(port), method: req.method, path: req.path, headers, agent: false }, (res) => {
      answer = { status: res.statusCode ?? 0, headers: res.headers, text: '' };
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', finish);
      res.on('error', finish);
    });
    r.on('error', (err) => (answer ? finish() : reject(err)));
    r.end(body);
  });
}

const UPPER_SNAKE = /^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/;

/** The four promises of every row: the expected 4xx, our JSON error body, a live server (the fourth, state, is checked once for the corpus). */
async function expectRefused(baseUrl: string, [name, req, code]: Row): Promise<void> {
  const res = await send(baseUrl, req);
  const expected = ERROR_STATUS[code];
  expect(res.status, `${name}: ${res.text.slice(0, 300)}`).toBe(expected);
  expect(res.status, name).toBeGreaterThanOrEqual(400);
  expect(res.status, name).toBeLessThan(500);
  expect(String(res.headers['content-type']), name).toMatch(/^application\/json/);
  let body: unknown;
  expect(
    () => {
      body = parseStrictJson(res.text);
    },
    `${name}: the body is not JSON: ${res.text.slice(0, 200)}`,
  ).not.toThrow();
  expect(body, name).toMatchObject({ error: expect.any(String), code });
  const got = (body as Json).code as string;
  expect(got, name).toMatch(UPPER_SNAKE);
  expect(got, name).not.toMatch(/^FST_/);
  expect(ERROR_CODES, name).toContain(got);
  expect(JSON.stringify(body), name).not.toMatch(/\n\s+at /); // no stack trace
  const health = await requestJson('GET', `${baseUrl}/health`);
  expect(health.status, `${name}: /health afterwards`).toBe(200);
}

interface Seeded {
  silence: string;
  recurring: string;
}

/** The seeded ids in place of their placeholders. */
function withSeeds(req: Req, seeded: Seeded): Req {
  return { ...req, path: req.path.replace(SILENCE, seeded.silence).replace(RECURRING, seeded.recurring) };
}

/** Equal snapshots. The seeded quota counts by month: should the run cross into a new month, its usage is left out. */
function expectUnchanged(after: Snapshot, before: Snapshot): void {
  if (after.quotaUsage.resets_at !== before.quotaUsage.resets_at) {
    expect({ ...after, quotaUsage: null }).toEqual({ ...before, quotaUsage: null });
  } else {
    expect(after).toEqual(before);
  }
}

type Snapshot = Awaited<ReturnType<typeof snapshot>>;

/** Everything the corpus must leave alone, as the API shows it. */
async function snapshot(gw: RunningGateway, headers: Record<string, string> = {}) {
  const read = async (path: string) => {
    const res = await requestJson('GET', `${gw.url}${path}`, undefined, headers);
    expect(res.status, path).toBe(200);
    return res.body as Json;
  };
  return {
    tenantAudit: await read(`/v1/audit?tenant=${T}&limit=1000`),
    wholeAudit: await read('/v1/audit?limit=1000'),
    rules: await read('/v1/rules'),
    silences: await read('/v1/silences?include_expired=true'),
    quotas: await read('/v1/quotas?limit=1000'),
    quotaUsage: await read(`/v1/quotas/${SEED_QUOTA}/usage`),
    recurring: await read(`/v1/recurring?${SCOPE}&limit=1000`),
  };
}

/** One of each kind of state the rows aim at: a dispatch in the trail, an API rule, a silence, a quota, a recurring action. */
async function seed(gw: RunningGateway, headers: Record<string, string> = {}): Promise<Seeded> {
  const create = async (path: string, body: unknown, status: number) => {
    const res = await postJson(`${gw.url}${path}`, body, headers);
    expect(res.status, `seed ${path}: ${JSON.stringify(res.body)}`).toBe(status);
    return res.body as Json;
  };
  await create('/v1/dispatch', act({ id: 'fault-seed-action' }), 200);
  await create('/v1/rules', rule({ name: SEED_RULE, priority: 1000 }), 201);
  await create('/v1/quotas', quota({ id: SEED_QUOTA, max_actions: 1_000_000, window: 'monthly' }), 201);
  const s = await create('/v1/silences', silence(), 201);
  const r = await create('/v1/recurring', recurring(), 201);
  return { silence: String(s.id), recurring: String(r.recurring_id) };
}

describe.each(BACKENDS)('bad inputs (%s)', (backend) => {
  let gw: RunningGateway;
  let seeded: Seeded;
  let before: Snapshot;

  beforeAll(async () => {
    gw = await startGateway(backend, { background: { enable_retention_reaper: false } });
    seeded = await seed(gw);
    before = await snapshot(gw);
  });
  afterAll(() => gw.close());

  it.each(CORPUS)('%s', async (name, req, code) => {
    await expectRefused(gw.url, [name, withSeeds(req, seeded), code]);
  });

  it('the whole corpus changed nothing: audit trail, rules, silences, quotas and their usage, recurring actions', async () => {
    expectUnchanged(await snapshot(gw), before);
    expect(CORPUS.length).toBeGreaterThanOrEqual(80);
    expect(new Set(CORPUS.map(([name]) => name)).size).toBe(CORPUS.length);
  });

  it('headers the docs say are ignored are ignored: a malformed traceparent, an X-Request-Id over 128 characters', async () => {
    const dryRun = (headers: Record<string, string>) => postJson(`${gw.url}/v1/dispatch?dry_run=true`, act(), headers);
    for (const traceparent of ['garbage', `00-${'0'.repeat(32)}-${'g'.repeat(16)}-01`, `00-${long(5000)}-01`]) {
      const res = await dryRun({ traceparent });
      expect(res.status, traceparent.slice(0, 40)).toBe(200);
      expect(res.body).toMatchObject({ outcome: 'dry_run' });
    }
    const bigId = long(10 * 1024);
    const res = await dryRun({ 'x-request-id': bigId });
    expect(res.status).toBe(200);
    const echoed = res.headers.get('x-request-id') ?? '';
    expect(echoed).not.toBe(bigId);
    expect(echoed.length).toBeGreaterThan(0);
    expect(echoed.length).toBeLessThanOrEqual(128);
    // On a refused request too: the error is about the body, and the id is a fresh one.
    const refused = await postJson(`${gw.url}/v1/dispatch`, act({ tenant: 5 }), { 'x-request-id': bigId, traceparent: 'garbage' });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: 'VALIDATION_FAILED' });
    expect(refused.headers.get('x-request-id')).not.toBe(bigId);
    // Dry runs write nothing.
    expectUnchanged(await snapshot(gw), before);
  });
});

describe.each(BACKENDS)('bad credentials (%s)', (backend) => {
  let gw: RunningGateway;
  let before: Snapshot;
  const ROOT = keyHeader('root');

  beforeAll(async () => {
    const file = credentialsFile({
      keys: [
        { name: 'root', role: 'admin', grants: [WILDCARD_GRANT] },
        { name: 'viewer', role: 'viewer', grants: [WILDCARD_GRANT] },
        { name: 'alpha', role: 'operator', grants: [{ tenants: ['alpha'], namespaces: ['*'], actions: ['*'] }] },
      ],
    }).file;
    gw = await startGateway(backend, { auth: { enabled: true, file }, background: { enable_retention_reaper: false } });
    await seed(gw, ROOT);
    before = await snapshot(gw, ROOT);
  });
  afterAll(() => gw.close());

  it.each(AUTH_ROWS)('%s', async (name, req, code) => {
    await expectRefused(gw.url, [name, req, code]);
  });

  it('changed nothing', async () => {
    expectUnchanged(await snapshot(gw, ROOT), before);
    expect(((await requestJson('GET', `${gw.url}/v1/audit?tenant=alpha`, undefined, ROOT)).body as { records: unknown[] }).records).toHaveLength(0);
  });
});
