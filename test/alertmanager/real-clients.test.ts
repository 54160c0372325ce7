import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alertFingerprint } from '../../libs/gateway/src/alertmanager/alert-fingerprint.js';
import { ALERTMANAGER_CONFIG, ALERT_MACHINE, ALERT_RULES } from '../support/alertmanager-config.js';
import { credentialsFile, keyHeader, rawKey, WILDCARD_GRANT } from '../support/credentials.js';
import { poll } from '../support/poll.js';
import { amtool, startAlertmanager, startPrometheus, type RunningProgram } from '../support/prometheus-programs.js';
import { rulesDir } from '../support/rules-dir.js';
import { postJson, requestJson, sampleAction, startGateway, type RunningGateway } from '../support/start-gateway.js';

/** The alert that routes, and one no route takes: one rule's series, so Prometheus sends them in one request. */
const ROUTED = 'label_replace(label_replace(vector(1), "team", "db", "", ""), "cluster", "eu-2", "", "")';
const UNROUTED = 'label_replace(vector(1), "severity", "warning", "", "")';
const rules = (expr: string) => `
groups:
  - name: test
    rules:
      - alert: AlwaysFiring
        expr: '${expr}'
        annotations: { summary: always }
`;
const FIRING_RULES = rules(`${ROUTED} or ${UNROUTED}`);
/** The routed series no longer firing (a removed rule's alerts are dropped, not resolved); the other one still is. */
const RESOLVED_RULES = rules(UNROUTED);

/*
 * The real programs as clients, with authentication on: a stock Prometheus sends its alerts to
 * Sluice as to an Alertmanager (HTTP basic auth, an API key as password), amtool manages silences
 * (bearer key from its HTTP config file), and a real Alertmanager forwards a notification through
 * its webhook receiver.
 */
describe('Prometheus, Alertmanager and amtool against Sluice', () => {
  let gw: RunningGateway;
  const programs: RunningProgram[] = [];
  const headers = keyHeader('ops');
  const get = async (path: string) => requestJson('GET', `${gw.url}${path}`, undefined, headers);

  beforeAll(async () => {
    const { file } = credentialsFile({ keys: [{ name: 'ops', role: 'admin', grants: [WILDCARD_GRANT] }] });
    gw = await startGateway('memory', {
      auth: { enabled: true, file },
      rules: { directory: rulesDir({ 'rules.yaml': ALERT_RULES }) },
      state_machines: [ALERT_MACHINE],
      alertmanager: ALERTMANAGER_CONFIG,
    });
  });
  afterAll(async () => {
    await Promise.all(programs.map((p) => p.stop()));
    await gw?.close();
  });

  it('Prometheus delivers a firing alert as an action, and its resolution resolves the event, though an alert sent with it has no route', async () => {
    const prometheus = await startPrometheus({
      alertmanagerHostPort: new URL(gw.url).host,
      rules: FIRING_RULES,
      basicAuth: { username: 'prometheus', password: rawKey('ops') },
    });
    programs.push(prometheus);
    const fingerprint = alertFingerprint({ alertname: 'AlwaysFiring', team: 'db', cluster: 'eu-2' });
    const event = async () => (await get(`/v1/events/${fingerprint}?namespace=monitoring&tenant=eu-2`)).body as { state?: string } | null;
    const firing = await poll('the alert recorded as an event', event, (e) => e?.state === 'firing', { timeoutMs: 30_000, intervalMs: 250 });
    expect(firing).toMatchObject({ fingerprint, state: 'firing' });
    const records = (await get('/v1/audit?namespace=monitoring&tenant=eu-2&limit=5')).body as { records: { action_type: string }[] };
    expect(records.records[0]).toMatchObject({ action_type: 'AlwaysFiring' });

    await prometheus.rewrite('rules.yml', RESOLVED_RULES);
    await poll('the event resolved', event, (e) => e?.state === 'resolved', { timeoutMs: 30_000, intervalMs: 250 });
  }, 90_000);

  it('amtool adds, queries and expires a silence that mutes matching dispatches', async () => {
    const httpConfig = join(programs[0]?.dir ?? '/tmp', 'amtool-http.yml');
    writeFileSync(httpConfig, `authorization: { credentials: ${JSON.stringify(rawKey('ops'))} }\n`);
    const run = (args: string[]) => amtool(gw.url, [`--http.config.file=${httpConfig}`, ...args]);
    const id = (await run(['silence', 'add', 'alertname=Foo', '-c', 'test', '-d', '1h'])).trim();
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const listed = (await get('/v1/silences?namespace=monitoring&tenant=main')).body as { silences: { id: string; matchers: unknown[] }[] };
    expect(listed.silences.find((s) => s.id === id)).toMatchObject({ matchers: [{ name: 'alertname', op: 'equal', value: 'Foo' }] });
    const muted = await postJson(
      `${gw.url}/v1/dispatch`,
      sampleAction({ namespace: 'monitoring', tenant: 'main', metadata: { labels: { alertname: 'Foo' } } }),
      headers,
    );
    expect(muted.body).toMatchObject({ outcome: 'suppressed', silence_id: id });

    expect((await run(['silence', 'query', '-q'])).split('\n')).toContain(id);
    expect((await run(['silence', 'query', '-q', 'alertname=Foo'])).trim()).toBe(id);
    await run(['silence', 'expire', id]);
    expect((await run(['silence', 'query', '-q'])).split('\n')).not.toContain(id);
    expect((await get(`/v1/silences/${id}`)).body).toMatchObject({ active: false });
  });

  it('Alertmanager forwards an alert through its webhook receiver; the fingerprint is Alertmanager’s', async () => {
    const alertmanager = await startAlertmanager({ webhookUrl: `${gw.url}/v1/integrations/alertmanager`, bearer: rawKey('ops') });
    programs.push(alertmanager);
    const labels = { alertname: 'Forwarded', severity: 'page', instance: 'web-7' };
    const posted = await fetch(`${alertmanager.url}/api/v2/alerts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([{ labels, annotations: { summary: 'via webhook' } }]),
    });
    expect(posted.status).toBe(200);
    const fingerprint = alertFingerprint(labels);
    const event = await poll(
      'the forwarded alert as an event',
      async () => (await get(`/v1/events/${fingerprint}?namespace=monitoring&tenant=main`)).body as { state?: string } | null,
      (e) => e?.state === 'firing',
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    expect(event).toMatchObject({ fingerprint });
    const records = (await get('/v1/audit?namespace=monitoring&tenant=main&action_type=page&limit=5')).body as { records: unknown[] };
    expect(records.records.length).toBeGreaterThan(0);
  }, 60_000);
});
