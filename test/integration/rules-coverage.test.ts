import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentialsFile, keyHeader, WILDCARD_GRANT } from '../support/credentials.js';
import { rulesDir } from '../support/rules-dir.js';
import { BACKENDS, postJson, sampleAction, startGateway, type RunningGateway } from '../support/start-gateway.js';

const RULES = `
rules:
  - name: block-spam
    priority: 1
    condition: { field: action.action_type, eq: spam }
    action: { type: suppress, reason: looks like spam }
  - name: vip
    priority: 2
    condition: { field: action.payload.vip, eq: true }
    action: { type: allow }
  - name: never
    priority: 3
    condition: { field: action.action_type, eq: never-sent }
    action: { type: suppress }
  - name: switched-off
    priority: 4
    enabled: false
    condition: { field: action.action_type, eq: never-sent }
    action: { type: suppress }
`;

type Entry = {
  namespace: string;
  tenant: string;
  provider: string;
  action_type: string;
  total: number;
  covered: number;
  uncovered: number;
  matched_rules: string[];
};
type Report = {
  scanned_from: string;
  scanned_to: string;
  total_actions: number;
  unique_combinations: number;
  fully_covered: number;
  partially_covered: number;
  uncovered: number;
  rules_loaded: number;
  entries: Entry[];
  unmatched_rules: string[];
};

const CALLERS = [
  { name: 'root', role: 'admin' as const, grants: [WILDCARD_GRANT] },
  { name: 'acme-viewer', role: 'viewer' as const, grants: [{ tenants: ['acme'], namespaces: ['*'], actions: ['*'] }] },
  { name: 'two', role: 'viewer' as const, grants: [{ tenants: ['acme', 'initech'], namespaces: ['*'], actions: ['*'] }] },
];

const DAY = 24 * 3_600_000;
const row = (tenant: string, action_type: string, covered: number, uncovered: number, matched_rules: string[]): Entry => ({
  namespace: 'payments',
  tenant,
  provider: 'email',
  action_type,
  total: covered + uncovered,
  covered,
  uncovered,
  matched_rules,
});

describe.each(BACKENDS)('GET /v1/rules/coverage (%s backend)', (backend) => {
  let gw: RunningGateway;
  /** Midnight UTC of the day the actions were dispatched. */
  let today: number;
  const coverage = async (query: string, caller = 'root') => {
    const res = await fetch(`${gw.url}/v1/rules/coverage?${query}`, { headers: keyHeader(caller) });
    return { status: res.status, body: (await res.json()) as Report & { error?: string; code?: string } };
  };

  beforeAll(async () => {
    gw = await startGateway(backend, {
      auth: { enabled: true, file: credentialsFile({ keys: CALLERS }).file },
      rules: { directory: rulesDir({ 'main.yaml': RULES }) },
    });
    const send = (over: Record<string, unknown>) => postJson(`${gw.url}/v1/dispatch`, sampleAction(over), keyHeader('root'));
    today = Math.floor(Date.now() / DAY) * DAY;
    for (let i = 0; i < 3; i++) await send({ tenant: 'acme', action_type: 'send' });
    for (let i = 0; i < 2; i++) await send({ tenant: 'acme', action_type: 'spam' });
    await send({ tenant: 'acme', action_type: 'notify', payload: { vip: true } });
    await send({ tenant: 'acme', action_type: 'notify' });
    for (let i = 0; i < 2; i++) await send({ tenant: 'globex', action_type: 'send' });
    await send({ tenant: 'acme.eu', action_type: 'spam' });
    // A dry run writes no audit record, so it is not counted.
    await postJson(`${gw.url}/v1/dispatch?dry_run=true`, sampleAction({ tenant: 'acme', action_type: 'spam' }), keyHeader('root'));
  });
  afterAll(() => gw.close());

  it('lists uncovered, then partially covered, then covered combinations, and the enabled rules that matched nothing', async () => {
    const { status, body } = await coverage('');
    expect(status).toBe(200);
    expect(body.entries).toEqual([
      row('acme', 'send', 0, 3, []),
      row('globex', 'send', 0, 2, []),
      // An allow rule counts as covering (the reference's audit records no rule for allow).
      row('acme', 'notify', 1, 1, ['vip']),
      row('acme', 'spam', 2, 0, ['block-spam']),
      row('acme.eu', 'spam', 1, 0, ['block-spam']),
    ]);
    expect(body).toMatchObject({ total_actions: 10, unique_combinations: 5, fully_covered: 2, partially_covered: 1, uncovered: 2, rules_loaded: 4 });
    // switched-off is disabled, so it is not reported as unmatched.
    expect(body.unmatched_rules).toEqual(['never']);
    // Default: the 7 days before now, widened to whole UTC days.
    const from = Date.parse(body.scanned_from);
    const to = Date.parse(body.scanned_to);
    expect(from % DAY).toBe(0);
    expect(to % DAY).toBe(0);
    expect(to - from).toBe(8 * DAY);
    expect(to).toBeGreaterThan(Date.now());
  });

  it('filters by namespace and tenant', async () => {
    const globex = (await coverage('tenant=globex')).body;
    expect(globex.entries).toEqual([row('globex', 'send', 0, 2, [])]);
    expect(globex.unmatched_rules).toEqual(['block-spam', 'never', 'vip']);
    expect((await coverage('namespace=elsewhere')).body).toMatchObject({ entries: [], total_actions: 0, unique_combinations: 0 });
  });

  it('scopes a single-tenant caller to its tenant and refuses a tenant it is not granted', async () => {
    const own = (await coverage('', 'acme-viewer')).body;
    expect(own.entries.map((e) => `${e.tenant}/${e.action_type}`)).toEqual(['acme/send', 'acme/notify', 'acme/spam']);
    expect(own.total_actions).toBe(7);
    const refused = await coverage('tenant=globex', 'acme-viewer');
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('FORBIDDEN');
  });

  it('leaves out what a multi-tenant caller may not see (hierarchical grants)', async () => {
    const two = (await coverage('', 'two')).body;
    expect(two.entries.map((e) => `${e.tenant}/${e.action_type}`)).toEqual(['acme/send', 'acme/notify', 'acme/spam', 'acme.eu/spam']);
    expect(two.total_actions).toBe(8);
  });

  it('counts whole UTC days of an explicit range; an earlier range holds nothing', async () => {
    const iso = (ms: number) => new Date(ms).toISOString();
    const sameDay = (await coverage(`from=${iso(today + 1000)}&to=${iso(today + 2000)}`)).body;
    expect(sameDay.scanned_from).toBe(iso(today));
    expect(sameDay.scanned_to).toBe(iso(today + DAY));
    expect(sameDay.total_actions).toBe(10);
    const before = (await coverage(`from=${iso(today - 5 * DAY)}&to=${iso(today)}`)).body;
    expect(before).toMatchObject({ total_actions: 0, entries: [], unmatched_rules: ['block-spam', 'never', 'vip'] });
  });

  it('refuses bad ranges with 400', async () => {
    expect((await coverage('from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z')).status).toBe(400);
    expect((await coverage('from=2024-01-01T00:00:00Z&to=2026-01-01T00:00:00Z')).status).toBe(400);
    expect((await coverage('from=yesterday')).status).toBe(400);
    expect((await coverage('from=2025-01-01T00:00:00Z&to=2026-01-01T00:00:00Z')).status).toBe(200);
  });

  it('answers 404 when audit is disabled', async () => {
    const off = await startGateway(backend, { audit: { enabled: false } });
    try {
      await postJson(`${off.url}/v1/dispatch`, sampleAction());
      const res = await fetch(`${off.url}/v1/rules/coverage`);
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ error: 'rules coverage is not available (audit is disabled)', code: 'NOT_FOUND' });
    } finally {
      await off.close();
    }
  });
});
