import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { writeConfigFile } from '../support/config-file.js';
import { TEST_JWT_SECRET, WILDCARD_GRANT, credentialsFile, rawKey, type CredentialsSpec } from '../support/credentials.js';
import { freePort } from '../support/free-port.js';
import { startSink, type HttpSink } from '../support/http-sink.js';
import { poll } from '../support/poll.js';
import { startRedisServer } from '../support/redis-server.js';
import { rulesDir } from '../support/rules-dir.js';
import { spawnSluice, type SluiceProcess } from '../support/sluice-process.js';
import { parseStrictJson } from '../support/strict-json.js';

/**
 * docs/operations.md#logs promises JSON lines with unique keys, nothing on stderr but JSON, and
 * no payload or credential at `info` and above. Real `sluice` processes run at info through
 * most features with planted secrets in every payload and credential, then every line they
 * wrote is checked. A debug-level process shows the check can fail (there the payload appears).
 */

const PAYLOAD_SECRET = '4111-PLANTED-SECRET-9f3a';
const PASSWORD = 'PLANTED-PASSWORD-6d0e';
const WRONG_PASSWORD = 'PLANTED-WRONG-PASSWORD-2b7c';
const UNKNOWN_KEY = 'sk-PLANTED-UNKNOWN-KEY-41aa';
const HMAC_SECRET = 'PLANTED-HMAC-SECRET-c3d8';
const WEBHOOK_TOKEN = 'PLANTED-WEBHOOK-TOKEN-77e1';
/** Every credential planted in the configuration; the ones handed out at run time (JWTs, approval signatures) are added to it. */
const PLANTED = [PAYLOAD_SECRET, PASSWORD, WRONG_PASSWORD, UNKNOWN_KEY, HMAC_SECRET, WEBHOOK_TOKEN, TEST_JWT_SECRET];

const KEYS = { admin: 'lh-admin', ops: 'lh-ops', viewer: 'lh-viewer', retired: 'lh-retired' } as const;
const credentials = (keys: readonly string[]): CredentialsSpec => ({
  keys: keys.map((name) => ({ name, role: name === KEYS.viewer ? 'viewer' : name === KEYS.admin ? 'admin' : 'operator', grants: [WILDCARD_GRANT] })),
  users: [{ name: 'lh-alice', password: PASSWORD, role: 'operator', grants: [WILDCARD_GRANT] }],
});
const ALL_KEYS = Object.values(KEYS);

const RULES = `
rules:
  - { name: lh-suppress, priority: 1, condition: { field: action.action_type, eq: suppress-me }, action: { type: suppress, reason: planted test } }
  - { name: lh-modify, priority: 2, condition: { field: action.action_type, eq: modify-me }, action: { type: modify, changes: { modified: true } } }
  - { name: lh-dedup, priority: 3, condition: { field: action.action_type, eq: dedup-me }, action: { type: deduplicate, ttl_seconds: 60 } }
  - { name: lh-throttle, priority: 4, condition: { field: action.action_type, eq: throttle-me }, action: { type: throttle, max_count: 1, window_seconds: 60 } }
  - name: lh-group
    priority: 5
    condition: { field: action.action_type, in: [group-me, group-log] }
    action: { type: group, group_by: [action_type, payload.cluster], group_wait_seconds: 1 }
  - { name: lh-state, priority: 6, condition: { field: action.action_type, eq: alert }, action: { type: state_machine, state_machine: lh-alert, fingerprint_fields: [payload.host] } }
  - { name: lh-approval, priority: 7, condition: { field: action.action_type, eq: wire }, action: { type: require_approval, message: check it, ttl_seconds: 600, notify_provider: logp } }
  - { name: lh-chain, priority: 8, condition: { field: action.action_type, eq: onboard-me }, action: { type: chain, chain_name: lh-onboard } }
  - { name: lh-reroute, priority: 9, condition: { field: action.action_type, eq: reroute-me }, action: { type: reroute, target_provider: logp } }
`;
/** Fails to evaluate on its action (the card is no number): logged as a rule error, treated as not matching. */
const CEL_RULES = `
rules:
  - name: lh-cel-error
    priority: 20
    expression: 'action.action_type == "cel-error" && int(action.payload.card) > 0'
    action: { type: suppress, reason: never }
`;

function configText(o: { sink: string; broken: string; creds: string; rules: string; port: number; redis?: string; workerPort?: number }): string {
  return `
server:
  drain_delay_seconds: 0
  shutdown_timeout_seconds: 10
  external_url: "http://127.0.0.1:${o.port}"
${o.redis ? `state: { backend: redis, url: "${o.redis}", prefix: "lh${o.port}" }\nworker: { port: ${o.workerPort} }` : ''}
providers:
  - { name: hook, type: webhook, url: "${o.sink}", timeout_ms: 5000, hmac_secret: "${HMAC_SECRET}", headers: { authorization: "Bearer ${WEBHOOK_TOKEN}" } }
  - { name: broken, type: webhook, url: "${o.broken}", timeout_ms: 5000 }
  - { name: logp, type: log }
executor: { max_retries: 1, backoff_base_ms: 10, backoff_max_ms: 20, dlq_enabled: true }
rules: { directory: "${o.rules}" }
auth: { enabled: true, file: "${o.creds}", watch: true }
state_machines:
  - name: lh-alert
    initial_state: open
    states: [open, acknowledged, resolved]
    transitions:
      - { from: open, to: acknowledged, notify: true }
      - { from: acknowledged, to: resolved }
      - { from: open, to: resolved }
chains:
  definitions:
    - name: lh-onboard
      steps:
        - { name: first, provider: hook, action_type: chain-step }
        - { name: second, provider: logp, action_type: chain-log }
`;
}

type Body = Record<string, unknown>;
interface Reply {
  status: number;
  body: Body;
}

/** One HTTP call; `auth` is a raw API key or JWT sent as Bearer, `raw` a body sent as is. */
async function call(
  base: string,
  method: string,
  path: string,
  opts: { auth?: string; headers?: Record<string, string>; json?: unknown; raw?: string } = {},
): Promise<Reply> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.auth) headers.authorization = `Bearer ${opts.auth}`;
  const body = opts.raw ?? (opts.json === undefined ? undefined : JSON.stringify(opts.json));
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${base}${path}`, { method, headers, body });
  const text = await res.text();
  let parsed: Body = {};
  try {
    parsed = text ? (JSON.parse(text) as Body) : {};
  } catch {
    parsed = { text };
  }
  return { status: res.status, body: parsed };
}

const action = (action_type: string, extra: Body = {}): Body => ({
  namespace: 'payments',
  tenant: 'acme',
  provider: 'hook',
  action_type,
  payload: { card: PAYLOAD_SECRET, cluster: 'eu', host: 'h1' },
  ...extra,
});

interface Scenario {
  api: string;
  sink: HttpSink;
  rewriteCredentials(spec: CredentialsSpec): void;
  /** Every line of every process of the deployment so far. */
  output(): string[];
}

/** Drives the API through most features, each checked to have happened; returns the credentials it was handed. */
async function exercise(s: Scenario): Promise<string[]> {
  const handedOut: string[] = [];
  const ops = rawKey(KEYS.ops);
  const dispatch = (body: Body, auth = ops) => call(s.api, 'POST', '/v1/dispatch', { auth, json: body });
  const outcome = async (body: Body) => (await dispatch(body)).body.outcome;

  // Dispatch outcomes of every kind.
  const executed = await dispatch(action('charge'));
  expect(executed.body).toMatchObject({ outcome: 'executed' });
  expect(s.sink.received.some((c) => JSON.stringify(c.payload).includes(PAYLOAD_SECRET))).toBe(true);
  expect(await outcome(action('note', { provider: 'logp' }))).toBe('executed');
  expect(await outcome(action('suppress-me'))).toBe('suppressed');
  expect(await outcome(action('modify-me'))).toBe('executed');
  expect(await outcome(action('dedup-me', { dedup_key: 'd1' }))).toBe('executed');
  expect(await outcome(action('dedup-me', { dedup_key: 'd1' }))).toBe('deduplicated');
  expect(await outcome(action('throttle-me'))).toBe('executed');
  expect(await outcome(action('throttle-me'))).toBe('throttled');
  expect(await outcome(action('alert', { status: 'acknowledged' }))).toBe('state_changed');
  expect(await outcome(action('alert', { status: 'resolved' }))).toBe('state_changed');
  expect(await outcome(action('group-me'))).toBe('grouped');
  expect(await outcome(action('group-me', { payload: { card: PAYLOAD_SECRET, cluster: 'eu', n: 2 } }))).toBe('grouped');
  expect(await outcome(action('group-log', { provider: 'logp' }))).toBe('grouped');
  expect(await outcome(action('onboard-me'))).toBe('chain_started');
  expect(await outcome(action('reroute-me'))).toBe('rerouted');
  expect(await outcome(action('cel-error', { provider: 'logp' }))).toBe('executed');
  const failed = await dispatch(action('charge', { provider: 'broken' }));
  expect(failed.body).toMatchObject({ outcome: 'failed' });
  const batch = await call(s.api, 'POST', '/v1/dispatch/batch', { auth: ops, json: { actions: [action('charge'), action('suppress-me')] } });
  expect(batch.status).toBe(200);
  expect((await call(s.api, 'POST', '/v1/dispatch?dry_run=true', { auth: ops, json: action('charge') })).body).toMatchObject({ outcome: 'dry_run' });

  // An approval, notified through the log provider and approved through its signed link.
  const pending = await dispatch(action('wire'));
  expect(pending.body).toMatchObject({ outcome: 'pending_approval', notification_sent: true });
  const approveUrl = String(pending.body.approve_url);
  handedOut.push(new URL(approveUrl).searchParams.get('sig') ?? 'no sig');
  const approved = await call(s.api, 'POST', approveUrl.slice(approveUrl.indexOf('/v1/')));
  expect(approved.body).toMatchObject({ status: 'approved' });

  // Requests refused before anything runs, with the secret in their bodies.
  expect((await call(s.api, 'POST', '/v1/dispatch', { auth: ops, raw: `{"payload":{"card":"${PAYLOAD_SECRET}"},` })).status).toBe(400);
  expect((await dispatch({ ...action('charge'), payload: PAYLOAD_SECRET })).status).toBe(400);
  expect((await dispatch({ ...action('charge'), namespace: 42 })).status).toBe(400);

  // Authentication refused in every way, and a JWT that is logged out.
  expect((await call(s.api, 'GET', '/v1/audit?tenant=acme')).status).toBe(401);
  expect((await call(s.api, 'GET', `/v1/audit?tenant=acme&api_key=${UNKNOWN_KEY}`)).status).toBe(401); // a key in the URL is logged redacted
  expect((await dispatch(action('charge'), UNKNOWN_KEY)).status).toBe(401);
  expect((await call(s.api, 'GET', '/v1/audit?tenant=acme', { headers: { 'x-api-key': UNKNOWN_KEY } })).status).toBe(401);
  expect((await call(s.api, 'GET', '/v1/audit?tenant=acme', { auth: `eyJhbGciOiJIUzI1NiJ9.${UNKNOWN_KEY}.c2ln` })).status).toBe(401);
  expect((await call(s.api, 'GET', '/v1/audit?tenant=acme', { headers: { authorization: `Basic ${UNKNOWN_KEY}` } })).status).toBe(401);
  expect((await dispatch(action('charge'), rawKey(KEYS.viewer))).status).toBe(403);
  expect((await call(s.api, 'POST', '/v1/auth/login', { json: { username: 'lh-alice', password: WRONG_PASSWORD } })).status).toBe(401);
  expect((await call(s.api, 'POST', '/v1/auth/login', { json: { username: 'lh-nobody', password: PASSWORD } })).status).toBe(401);
  const login = await call(s.api, 'POST', '/v1/auth/login', { json: { username: 'lh-alice', password: PASSWORD } });
  expect(login.status).toBe(200);
  const token = String(login.body.token);
  handedOut.push(token);
  expect((await call(s.api, 'GET', '/v1/audit?tenant=acme&limit=1', { auth: token })).status).toBe(200);
  expect((await call(s.api, 'POST', '/v1/auth/logout', { auth: token })).status).toBeLessThan(300);
  expect(await call(s.api, 'GET', '/v1/audit?tenant=acme&limit=1', { auth: token })).toMatchObject({ status: 401, body: { error: 'token has been revoked' } });

  // A key removed from the credentials file is refused once the file reloads.
  expect((await dispatch(action('note', { provider: 'logp' }), rawKey(KEYS.retired))).status).toBe(200);
  s.rewriteCredentials(credentials(ALL_KEYS.filter((k) => k !== KEYS.retired)));
  await poll(
    'the retired key to be refused',
    async () => (await dispatch(action('note', { provider: 'logp' }), rawKey(KEYS.retired))).status,
    (status) => status === 401,
    { intervalMs: 200 },
  );

  // Audit queries, a replay and a bulk replay, the dead-letter queue.
  const admin = rawKey(KEYS.admin);
  const records = await call(s.api, 'GET', '/v1/audit?tenant=acme&namespace=payments&limit=100', { auth: admin });
  expect(records.status).toBe(200);
  const id = String(executed.body.action_id);
  expect((await call(s.api, 'GET', `/v1/audit/${id}`, { auth: admin })).status).toBe(200);
  expect((await call(s.api, 'POST', `/v1/audit/${id}/replay`, { auth: ops })).body).toMatchObject({ success: true });
  expect((await call(s.api, 'POST', '/v1/audit/replay?tenant=acme&action_type=modify-me&limit=5', { auth: ops })).status).toBe(200);
  expect((await call(s.api, 'GET', '/v1/dlq?tenant=acme', { auth: admin })).body).toMatchObject({ count: 1 });

  // Background work: group flushes (webhook and log provider) and the chain's steps.
  await poll('the webhook group to flush', () => s.sink.received.some((c) => (c.payload as Body).flush_reason !== undefined));
  await poll('the chain step to reach the webhook', () => s.sink.received.some((c) => JSON.stringify(c).includes('chain-step')));
  const logged = (type: string) => s.output().some((l) => l.includes('log provider received action') && l.includes(`"action_type":"${type}"`));
  await poll('the log-provider group to flush and the chain to finish', () => logged('group-log') && logged('chain-log'));
  return handedOut;
}

interface Violation {
  problem: string;
  line: string;
}

/** (a) JSON, (b) no repeated key at any depth, (c) at info and above, none of the secrets. */
function violations(lines: readonly string[], secrets: readonly string[]): Violation[] {
  const found: Violation[] = [];
  for (const line of lines) {
    let level = Number.POSITIVE_INFINITY; // an unreadable line is held to the strictest rule
    try {
      const parsed = parseStrictJson(line) as { level?: unknown };
      if (typeof parsed.level === 'number') level = parsed.level;
      else found.push({ problem: 'no numeric level', line });
    } catch (err) {
      found.push({ problem: (err as Error).message, line });
    }
    if (level < 30) continue;
    for (const secret of secrets) if (line.includes(secret)) found.push({ problem: `contains ${secret}`, line });
  }
  return found;
}

async function stop(proc: SluiceProcess): Promise<void> {
  proc.kill('SIGTERM');
  const exit = await Promise.race([proc.exited, sleep(15_000).then(() => null)]);
  if (!exit) proc.kill('SIGKILL');
  expect(exit).toEqual({ code: 0, signal: null });
}

async function withSinks<T>(run: (sink: HttpSink, broken: HttpSink) => Promise<T>): Promise<T> {
  const sink = await startSink();
  const broken = await startSink();
  broken.status = 500;
  try {
    return await run(sink, broken);
  } finally {
    await sink.close();
    await broken.close();
  }
}

describe('log hygiene (real processes)', () => {
  it('sluice serve at info: JSON lines, unique keys, no payload and no credential', async () => {
    await withSinks(async (sink, broken) => {
      const creds = credentialsFile(credentials(ALL_KEYS));
      const rules = rulesDir({ 'rules.yaml': RULES, 'errors.cel': CEL_RULES });
      const port = await freePort();
      const config = writeConfigFile(configText({ sink: sink.url, broken: broken.url, creds: creds.file, rules, port }));
      const proc = await spawnSluice(['serve', '--config', config, '--port', String(port), '--host', '127.0.0.1'], {
        port,
        env: { SLUICE_LOGGING__LEVEL: 'info' },
      });
      let handedOut: string[] = [];
      try {
        handedOut = await exercise({ api: proc.url, sink, rewriteCredentials: creds.rewrite, output: () => proc.output });
      } finally {
        await stop(proc);
      }
      const secrets = [...PLANTED, ...ALL_KEYS.map(rawKey), ...handedOut];
      expect(violations(proc.output, secrets)).toEqual([]);
      // The lines checked are the ones of interest: info lines of the features exercised.
      const text = proc.output.join('\n');
      for (const msg of [
        'request rejected',
        'credentials reloaded',
        'rule evaluation failed; treated as not matching',
        'log provider received action',
        'action failed',
      ]) {
        expect(text).toContain(`"msg":"${msg}"`);
      }
      // The provider's failure names the provider, its code and the action, not its payload (checked above) or address.
      const failure = JSON.parse(proc.output.find((l) => l.includes('"msg":"action failed"')) ?? '{}') as Record<string, unknown>;
      expect(failure).toMatchObject({
        level: 40,
        component: 'execute',
        provider: 'broken',
        code: 'EXECUTION_FAILED',
        attempts: expect.any(Number),
        action_id: expect.any(String),
        tenant: expect.any(String),
        suppressed: 0,
      });
      // One request line per request, with its id and the fields operations.md#logs names.
      const requestLines = proc.output.filter((l) => l.includes('"msg":"request"')).map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(requestLines.length).toBeGreaterThan(10);
      for (const line of requestLines) {
        expect(line).toMatchObject({
          service: 'sluice',
          role: 'serve',
          reqId: expect.any(String),
          method: expect.any(String),
          url: expect.any(String),
          route: expect.any(String),
          status: expect.any(Number),
          ms: expect.any(Number),
        });
      }
      expect(new Set(requestLines.map((l) => l.reqId)).size).toBe(requestLines.length);
    });
  }, 60_000);

  it('sluice serve at debug: the payload is logged, so the check above can fail', async () => {
    const port = await freePort();
    const config = writeConfigFile('server: { drain_delay_seconds: 0 }\nproviders:\n  - { name: logp, type: log }\n');
    const proc = await spawnSluice(['serve', '--config', config, '--port', String(port), '--host', '127.0.0.1'], {
      port,
      env: { SLUICE_LOGGING__LEVEL: 'debug' },
    });
    try {
      expect((await call(proc.url, 'POST', '/v1/dispatch', { json: action('note', { provider: 'logp' }) })).body).toMatchObject({ outcome: 'executed' });
      await poll('the debug line', () => proc.output.some((l) => l.includes(PAYLOAD_SECRET)));
    } finally {
      await stop(proc);
    }
    expect(violations(proc.output, PLANTED)).toEqual([]);
    // The same line held to the info rule is a violation.
    const debugLine = proc.output.find((l) => l.includes(PAYLOAD_SECRET)) ?? '';
    expect(violations([debugLine.replace('"level":20', '"level":30')], PLANTED)).toEqual([{ problem: `contains ${PAYLOAD_SECRET}`, line: expect.any(String) }]);
  }, 30_000);

  it('sluice worker + sluice serve --no-worker on Redis, through a Redis outage', async () => {
    let redis = await startRedisServer();
    try {
      // BullMQ warns on the console (plain text) about this at each connection's start; the
      // gateway refuses such a Redis unless told to run on it (state.allow_eviction, below).
      const admin = new Redis(redis.url);
      await admin.config('SET', 'maxmemory-policy', 'allkeys-lru');
      admin.disconnect();
      await withSinks(async (sink, broken) => {
        const creds = credentialsFile(credentials(ALL_KEYS));
        const rules = rulesDir({ 'rules.yaml': RULES, 'errors.cel': CEL_RULES });
        const port = await freePort();
        const workerPort = await freePort();
        const config = writeConfigFile(configText({ sink: sink.url, broken: broken.url, creds: creds.file, rules, port, redis: redis.url, workerPort }));
        const env = { SLUICE_LOGGING__LEVEL: 'info', SLUICE_STATE__ALLOW_EVICTION: 'true' };
        const worker = await spawnSluice(['worker', '--config', config, '--port', String(workerPort), '--host', '127.0.0.1'], { port: workerPort, env });
        let api: SluiceProcess | undefined;
        let handedOut: string[] = [];
        try {
          api = await spawnSluice(['serve', '--no-worker', '--config', config, '--port', String(port), '--host', '127.0.0.1'], { port, env });
          const apiOutput = api.output;
          handedOut = await exercise({ api: api.url, sink, rewriteCredentials: creds.rewrite, output: () => [...worker.output, ...apiOutput] });
          // A short outage: both processes lose Redis, answer 503 / not ready, and come back.
          await redis.stop();
          expect((await call(api.url, 'POST', '/v1/dispatch', { auth: rawKey(KEYS.ops), json: action('charge') })).status).toBe(503);
          await sleep(1500);
          redis = await startRedisServer({ port: redis.port });
          for (const proc of [api, worker]) {
            await poll(`${proc === api ? 'api' : 'worker'} to be ready again`, async () => (await fetch(`${proc.url}/ready`)).status === 200, {
              timeoutMs: 15_000,
              intervalMs: 200,
            });
          }
        } finally {
          if (api) await stop(api);
          await stop(worker);
        }
        const secrets = [...PLANTED, ...ALL_KEYS.map(rawKey), ...handedOut];
        expect(violations(worker.output, secrets)).toEqual([]);
        expect(violations(api.output, secrets)).toEqual([]);
        // The outage and BullMQ's warning were logged, as JSON lines.
        const schedulerLines = worker.output.filter((l) => l.includes('"msg":"scheduler"')).join('\n');
        expect(schedulerLines).toContain('ECONNREFUSED');
        expect(schedulerLines).toContain('Eviction policy is allkeys-lru');
      });
    } finally {
      await redis.stop();
    }
  }, 90_000);
});
