import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentialsFile, keyHeader, WILDCARD_GRANT } from '../support/credentials.js';
import { AUDIT_TRAILS, auditTrailConfig, type AuditTrailConfig } from '../support/audit-trails.js';
import { rulesDir } from '../support/rules-dir.js';
import { postJson, sampleAction, startGateway, type RunningGateway } from '../support/start-gateway.js';

const RULES = `
rules:
  - name: block-spam
    priority: 1
    condition: { field: action.action_type, eq: spam }
    action: { type: suppress, reason: looks like spam }
  - name: once
    priority: 2
    condition: { field: action.action_type, eq: receipt }
    action: { type: deduplicate, ttl_seconds: 60 }
`;

type Rec = Record<string, unknown> & { action_id: string; outcome: string; tenant: string };
type Page = { records: Rec[]; total?: number; next_cursor?: string };

const CALLERS = [
  { name: 'root', role: 'admin' as const, grants: [WILDCARD_GRANT] },
  { name: 'acme-op', role: 'operator' as const, grants: [{ tenants: ['acme'], namespaces: ['payments'], actions: ['*'] }] },
  { name: 'acme-viewer', role: 'viewer' as const, grants: [{ tenants: ['acme'], namespaces: ['payments'], actions: ['*'] }] },
];

describe.each(AUDIT_TRAILS)('audit trail over HTTP ($name)', (setup) => {
  let gw: RunningGateway;
  let stopTrail = async () => {};
  let rowsOf: AuditTrailConfig['rowsOf'] = null;
  const as = (caller: string) => keyHeader(caller);
  const get = async (path: string, caller = 'root') => {
    const res = await fetch(`${gw.url}${path}`, { headers: as(caller) });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const page = async (query: string, caller = 'root') => (await get(`/v1/audit?${query}`, caller)).body as unknown as Page;
  const dispatch = (action: Record<string, unknown>, caller = 'root') => postJson(`${gw.url}/v1/dispatch`, sampleAction(action), as(caller));

  beforeAll(async () => {
    const trail = await auditTrailConfig(setup);
    stopTrail = trail.stop;
    rowsOf = trail.rowsOf;
    gw = await startGateway(setup.state, {
      auth: { enabled: true, file: credentialsFile({ keys: CALLERS }).file },
      rules: { directory: rulesDir({ 'main.yaml': RULES }) },
      audit: { redact: { fields: ['card.number'] }, ...trail.audit },
      compliance: { mode: 'soc2' },
      background: { enable_retention_reaper: false },
    });
  }, 60_000);
  afterAll(async () => {
    await gw?.close();
    await stopTrail();
  });

  it('records every outcome except dry runs, newest first, with who asked', async () => {
    await dispatch({ id: 'a-exec', tenant: 'audit-1', payload: { card: { number: '4111', exp: '12/30' } } });
    await dispatch({ id: 'a-supp', tenant: 'audit-1', action_type: 'spam' });
    await dispatch({ id: 'a-r1', tenant: 'audit-1', action_type: 'receipt', dedup_key: 'r' });
    await dispatch({ id: 'a-r2', tenant: 'audit-1', action_type: 'receipt', dedup_key: 'r' });
    await postJson(`${gw.url}/v1/dispatch?dry_run=true`, sampleAction({ id: 'a-dry', tenant: 'audit-1' }), as('root'));
    const { records, total } = await page('tenant=audit-1');
    expect(records.map((r) => r.action_id)).toEqual(['a-r2', 'a-r1', 'a-supp', 'a-exec']);
    expect(total).toBe(4);
    expect(records.map((r) => r.outcome)).toEqual(['deduplicated', 'executed', 'suppressed', 'executed']);
    // On PostgreSQL, the list came from the table.
    if (rowsOf !== null) expect((await rowsOf('audit-1')).rows).toBe(4);
    const [dedup, , suppressed, executed] = records;
    expect(suppressed).toMatchObject({ verdict: 'suppress', matched_rule: 'block-spam', outcome_details: { rule: 'block-spam', reason: 'looks like spam' } });
    expect(dedup).toMatchObject({ verdict: 'deduplicate', metadata: { __dedup_key: 'r' } });
    expect(executed).toMatchObject({
      namespace: 'payments',
      provider: 'email',
      action_type: 'send',
      caller_id: 'root',
      auth_method: 'api_key',
      outcome_details: { status: 'success' },
      action_payload: { card: { number: '[REDACTED]', exp: '12/30' } },
    });
    expect(Date.parse(String(executed?.expires_at)) - Date.parse(String(executed?.dispatched_at))).toBe(2_592_000_000);
  });

  it('filters exactly, pages by offset and by cursor, and 404s an unknown id', async () => {
    for (let i = 0; i < 7; i++) await dispatch({ id: `p-${i}`, tenant: 'audit-2', action_type: i % 2 ? 'spam' : 'send' });
    expect((await page('tenant=audit-2&outcome=suppressed')).records.map((r) => r.action_id)).toEqual(['p-5', 'p-3', 'p-1']);
    expect((await page('tenant=audit-2&limit=2&offset=6')).records.map((r) => r.action_id)).toEqual(['p-0']);
    expect((await page('tenant=audit-2&limit=2&offset=10')).records).toEqual([]);
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const p = await page(`tenant=audit-2&limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...p.records.map((r) => r.action_id));
      cursor = p.next_cursor;
    } while (cursor);
    expect(seen).toEqual(['p-6', 'p-5', 'p-4', 'p-3', 'p-2', 'p-1', 'p-0']);
    expect((await get('/v1/audit/p-3')).body).toMatchObject({ action_id: 'p-3', outcome: 'suppressed' });
    expect(await get('/v1/audit/nope')).toMatchObject({ status: 404, body: { error: 'no audit record found for action: nope' } });
    // Out-of-range page sizes are refused, not clamped (validation-edges.test.ts covers the rest).
    expect(await get('/v1/audit?tenant=audit-2&limit=5000')).toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED' } });
    expect(await get('/v1/audit?tenant=audit-2&limit=0')).toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED' } });
    expect((await get('/v1/audit?tenant=audit-2&limit=1000')).body).toMatchObject({ limit: 1000 });
    expect((await get('/v1/audit?tenant=audit-2&limit=1')).body).toMatchObject({ limit: 1, records: [{ action_id: 'p-6' }] });
    expect((await get('/v1/audit?limit=many')).status).toBe(400);
    expect((await get('/v1/audit?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z')).status).toBe(400);
  });

  it('scopes every read to the grants: auto-scoped lists, 403 on named tenants and foreign records', async () => {
    await dispatch({ id: 'mine', tenant: 'acme' }, 'acme-op');
    await dispatch({ id: 'theirs', tenant: 'globex' });
    const own = await page('', 'acme-viewer');
    expect(own.records.every((r) => r.tenant === 'acme')).toBe(true);
    expect(own.records.map((r) => r.action_id)).toContain('mine');
    expect((await get('/v1/audit?tenant=globex', 'acme-viewer')).status).toBe(403);
    expect((await page('namespace=payments&outcome=executed', 'acme-viewer')).records.every((r) => r.tenant === 'acme')).toBe(true);
    // Another tenant's record is not found, not forbidden: a 403 would say the id exists there.
    expect((await get('/v1/audit/theirs', 'acme-viewer')).status).toBe(404);
    expect((await get('/v1/audit/mine', 'acme-viewer')).status).toBe(200);
  });

  it('replays one record with a new id and a replayed_from label, scope-checked like dispatch', async () => {
    await dispatch({ id: 'to-replay', tenant: 'acme', metadata: { labels: { env: 'prod' } } });
    // The caller's trace is the replay's, with tracing off too.
    const traceparent = '00-5555555555555555aaaaaaaaaaaaaaaa-6666666666666666-01';
    const res = await postJson(`${gw.url}/v1/audit/to-replay/replay`, {}, { ...as('acme-op'), traceparent });
    expect(res).toMatchObject({ status: 200, body: { original_action_id: 'to-replay', success: true, error: null, outcome: 'executed' } });
    const newId = (res.body as { new_action_id: string }).new_action_id;
    expect(newId).not.toBe('to-replay');
    expect((await get(`/v1/audit/${newId}`)).body).toMatchObject({
      metadata: { labels: { env: 'prod', replayed_from: 'to-replay' } },
      trace_id: '5555555555555555aaaaaaaaaaaaaaaa',
    });
    expect((await postJson(`${gw.url}/v1/audit/theirs/replay`, {}, as('acme-op'))).status).toBe(404);
    expect((await postJson(`${gw.url}/v1/audit/to-replay/replay`, {}, as('acme-viewer'))).status).toBe(403);
  });

  it('bulk-replays the matching records, skipping those outside the grants', async () => {
    await dispatch({ id: 'bulk-1', tenant: 'acme', action_type: 'bulk' });
    await dispatch({ id: 'bulk-2', tenant: 'acme.eu', namespace: 'other', action_type: 'bulk' });
    await dispatch({ id: 'bulk-3', tenant: 'acme', namespace: 'other', action_type: 'bulk' });
    const res = await postJson(`${gw.url}/v1/audit/replay?action_type=bulk&outcome=executed`, {}, as('root'));
    expect(res.body).toMatchObject({ replayed: 3, failed: 0, skipped: 0 });
    // Records of a namespace the caller is not granted are not matched, not counted: a count would
    // tell what happens there (filter by action type, caller, time...).
    const visible = (await page('action_type=bulk', 'acme-op')).records.length;
    const scoped = await postJson(`${gw.url}/v1/audit/replay?action_type=bulk&tenant=acme`, {}, as('acme-op'));
    expect(scoped).toMatchObject({ status: 200, body: { replayed: visible, skipped: 0 } });
    expect(visible).toBeGreaterThanOrEqual(2); // bulk-1 and its replay
    // Filters in a body are refused, not ignored: the replay would have taken every tenant's newest records.
    const before = (await page('action_type=bulk')).records.length;
    const misplaced = await postJson(`${gw.url}/v1/audit/replay`, { tenant: 'acme', action_type: 'bulk', limit: 1 }, as('root'));
    expect(misplaced).toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED' } });
    expect((await page('action_type=bulk')).records.length).toBe(before);
  });

  it('reports compliance and verifies the hash chain', async () => {
    expect((await get('/v1/compliance/status')).body).toEqual({ mode: 'soc2', sync_audit_writes: true, immutable_audit: false, hash_chain: true });
    const chained = (await page('tenant=audit-1')).records;
    expect(chained.map((r) => r.sequence_number)).toEqual([3, 2, 1, 0]);
    expect(chained[3]?.previous_hash).toBeNull();
    expect(chained[2]?.previous_hash).toBe(chained[3]?.record_hash);
    const verify = await postJson(`${gw.url}/v1/audit/verify`, { namespace: 'payments', tenant: 'audit-1' }, as('root'));
    expect(verify.body).toMatchObject({ valid: true, records_checked: 4 });
    expect((await postJson(`${gw.url}/v1/audit/verify`, { namespace: 'payments', tenant: 'globex' }, as('acme-viewer'))).status).toBe(403);
  });

  it("expires a tenant's records after its policy's audit TTL, in a retention cycle, and keeps the rest", async () => {
    const policy = await postJson(`${gw.url}/v1/retention`, { namespace: 'payments', tenant: 'brief', audit_ttl_seconds: 1 }, as('root'));
    expect(policy.status).toBe(201);
    await dispatch({ id: 'fleeting', tenant: 'brief' });
    await dispatch({ id: 'lasting', tenant: 'audit-ttl' });
    expect((await get('/v1/audit/fleeting')).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1100));
    // Hidden once due, then deleted by the cycle (counted), the other tenant's record untouched.
    expect((await get('/v1/audit/fleeting')).status).toBe(404);
    const cycle = await gw.runtime.reaper.runCycle();
    expect(cycle.auditExpired).toBeGreaterThanOrEqual(1);
    expect((await page('tenant=brief')).records).toEqual([]);
    expect((await get('/v1/audit/lasting')).status).toBe(200);
  });
});

describe('audit switched off, and payloads not stored', () => {
  it('answers 404 on the audit routes when audit is disabled', async () => {
    const gw = await startGateway('memory', { audit: { enabled: false } });
    try {
      await postJson(`${gw.url}/v1/dispatch`, sampleAction({ id: 'x' }));
      expect(await (await fetch(`${gw.url}/v1/audit`)).json()).toMatchObject({ error: 'audit is not enabled', code: 'NOT_FOUND' });
    } finally {
      await gw.close();
    }
  });

  it('keeps no payload with store_payload off, and refuses to replay such a record (422)', async () => {
    const gw = await startGateway('memory', { audit: { store_payload: false } });
    try {
      await postJson(`${gw.url}/v1/dispatch`, sampleAction({ id: 'private' }));
      expect(await (await fetch(`${gw.url}/v1/audit/private`)).json()).toMatchObject({ action_payload: null });
      expect(await postJson(`${gw.url}/v1/audit/private/replay`, {})).toMatchObject({ status: 422, body: { code: 'UNPROCESSABLE' } });
      const verify = await postJson(`${gw.url}/v1/audit/verify`, { namespace: 'payments', tenant: 'acme' });
      expect(verify).toMatchObject({ status: 400, body: { error: 'hash chaining is not enabled' } });
    } finally {
      await gw.close();
    }
  });
});
