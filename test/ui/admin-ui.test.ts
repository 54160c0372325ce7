import { describe, expect, it } from 'vitest';
import { keyHeader, rawKey } from '../support/credentials.js';
import { poll } from '../support/poll.js';
import { BACKENDS, postJson, requestJson } from '../support/start-gateway.js';
import { uiFixture } from './ui-fixture.js';

/*
 * The admin UI in a real Chromium against a running gateway with authentication on, on each
 * backend: the scenarios of the issue (sign in, Live, a silence made in the UI, an approval
 * decided in the UI, the audit search, a viewer's limits) and each view's controls. Rendering
 * (axe-core, widths, keyboard, screenshots of every view) is admin-ui-rendering.test.ts.
 */
describe.each(BACKENDS)('admin UI in Chromium (%s)', (backend) => {
  const ui = uiFixture(backend);
  /** Signed in as admin, the audit view searched for one tenant's records. */
  const auditOfTenant = async (tenant: string) => {
    const opened = await ui.openUi();
    await ui.signInWithKey(opened.page, rawKey('admin'));
    await ui.go(opened.page, 'audit');
    const filters = opened.page.getByRole('form', { name: 'Audit filters' });
    await filters.getByLabel('Tenant').fill(tenant);
    await filters.getByRole('button', { name: 'Search' }).click();
    return opened;
  };

  it('signs in with an API key and with a username and password; a wrong key is refused in the page', async () => {
    const { context, page } = await ui.openUi();
    await page.getByLabel('Key', { exact: true }).fill('sk-wrong');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/invalid|unauthorized|credential/i);
    await ui.screenshot(page, 'sign-in', false);
    await ui.signInWithKey(page, rawKey('admin'));
    expect(await page.getByTestId('identity').textContent()).toBe('admin (admin)');
    // A reload keeps the tab's session.
    await page.reload();
    await page.getByTestId('identity').waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Username and password').check();
    await page.getByLabel('Username', { exact: true }).fill('oncall');
    await page.getByLabel('Password', { exact: true }).fill('correct horse battery');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByTestId('identity').textContent()).toBe('oncall (operator)');
    await context.close();
  });

  it('returns to sign-in when the JWT it holds is revoked (the next call is a 401)', async () => {
    const { context, page } = await ui.openUi();
    await page.getByLabel('Username and password').check();
    await page.getByLabel('Username', { exact: true }).fill('oncall');
    await page.getByLabel('Password', { exact: true }).fill('correct horse battery');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByTestId('identity').waitFor();
    const token = await page.evaluate("sessionStorage.getItem('sluice.credential')");
    expect(typeof token).toBe('string');
    const logout = await postJson(`${ui.gw.url}/v1/auth/logout`, undefined, { authorization: `Bearer ${String(token)}` });
    expect(logout.status).toBe(200);
    await ui.go(page, 'quotas').catch(() => undefined);
    await page.getByRole('heading', { name: 'Sign in to Sluice' }).waitFor();
    expect(await page.evaluate("sessionStorage.getItem('sluice.credential')")).toBeNull();
    await context.close();
  });

  it('shows a dispatch in Live within two seconds, and the pause holds new events until resume', async () => {
    const { context, page } = await ui.openUi();
    await ui.signInWithKey(page, rawKey('admin'));
    await page.locator('[data-connection="live"]').waitFor();
    const started = Date.now();
    const sent = await ui.dispatch({ action_type: 'live-check' });
    // Well under a second on a quiet machine; two is the bound with the rest of the suite running beside it (2 cores).
    await page.getByRole('cell', { name: String(sent['action_id']) }).waitFor({ timeout: 2000 });
    expect(Date.now() - started).toBeLessThan(2000);
    await page.getByRole('button', { name: 'Pause' }).click();
    const held = await ui.dispatch({ action_type: 'while-paused' });
    await page.getByRole('button', { name: 'Resume (1 new)' }).waitFor();
    expect(await page.getByRole('cell', { name: String(held['action_id']) }).count()).toBe(0);
    await page.getByRole('button', { name: 'Resume (1 new)' }).click();
    await page.getByRole('cell', { name: String(held['action_id']) }).waitFor();
    await context.close();
  });

  it('creates a silence in the UI, previewed against recent actions; the next matching dispatch is suppressed', async () => {
    const labels = { env: 'prod', service: 'db-main' };
    const before = await ui.dispatch({ tenant: 'initech', action_type: 'page', metadata: { labels } });
    expect(before['outcome']).toBe('executed');
    const { context, page } = await ui.openUi();
    await ui.signInWithKey(page, rawKey('admin'));
    await ui.go(page, 'silences');
    const form = page.getByRole('form', { name: 'New silence' });
    await form.getByLabel('Namespace').fill('payments');
    await form.getByLabel('Tenant').fill('initech');
    await form.getByLabel('Comment').fill('database maintenance');
    const matcher = form.getByRole('group', { name: 'Matcher 1' });
    await matcher.getByLabel('Label').fill('service');
    await matcher.getByLabel('Operator').selectOption('regex');
    await matcher.getByLabel('Value').fill('db-.*');
    await form.getByRole('button', { name: 'Preview' }).click();
    await expect.poll(() => page.getByTestId('silence-preview').textContent()).toContain('Would have silenced 1 of the last 1 actions');
    await ui.screenshot(page, 'silence-preview');
    // The gateway's RE2 syntax previews as it will match: (?i) too.
    await matcher.getByLabel('Value').fill('(?i)DB-.*');
    await form.getByRole('button', { name: 'Preview' }).click();
    await expect.poll(() => page.getByTestId('silence-preview').textContent()).toContain('Would have silenced 1 of the last 1 actions');
    // A pattern RE2 refuses gets no preview, rather than a count of 0 (for !~, "mutes nothing" when it mutes everything).
    await matcher.getByLabel('Value').fill('db-(');
    await form.getByRole('button', { name: 'Preview' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/No preview for service =~ db-\(: /);
    await matcher.getByLabel('Value').fill('db-.*');
    await form.getByRole('button', { name: 'Create silence' }).click();
    await page.getByRole('cell', { name: 'database maintenance' }).waitFor();
    const after = await ui.dispatch({ tenant: 'initech', action_type: 'page', metadata: { labels } });
    expect(after['outcome']).toBe('suppressed');
    expect(ui.sink.received.map((c) => c.id)).not.toContain(after['action_id']);
    await context.close();
  });

  it('approves a pending approval in the UI and the sink receives the action', async () => {
    const pending = await ui.dispatch({ tenant: 'umbrella', action_type: 'wire', payload: { amount: 9000 } });
    expect(pending['outcome']).toBe('pending_approval');
    const { context, page } = await ui.openUi();
    await ui.signInWithKey(page, rawKey('admin'));
    await ui.go(page, 'approvals');
    await ui.screenshot(page, 'approval-pending');
    // What is being approved is on the page.
    await page.getByLabel(`Payload of wire ${String(pending['approval_id'])}`).click();
    await expect.poll(() => page.getByRole('table').textContent()).toContain('"amount": 9000');
    await page.getByRole('button', { name: `Approve wire ${String(pending['approval_id'])}` }).click();
    await poll('the sink to receive the approved action', async () => ui.sink.received.some((c) => c.id === pending['action_id']));
    await expect.poll(() => page.getByRole('button', { name: `Approve wire ${String(pending['approval_id'])}` }).count()).toBe(0);
    const record = (await requestJson('GET', `${ui.gw.url}/v1/approvals/payments/umbrella/${String(pending['approval_id'])}`, undefined, ui.admin)).body;
    expect(record).toMatchObject({ status: 'approved', decided_by: 'caller:admin' });
    await context.close();
  });

  it('says so when an approved action then fails (its breaker open), instead of announcing the approval alone', async () => {
    const pending = await ui.dispatch({ tenant: 'umbrella', action_type: 'wire', payload: { amount: 1 } });
    await postJson(`${ui.gw.url}/admin/circuit-breakers/sink/trip`, {}, ui.admin);
    try {
      const { context, page } = await ui.openUi();
      await ui.signInWithKey(page, rawKey('admin'));
      await ui.go(page, 'approvals');
      await page.getByRole('button', { name: `Approve wire ${String(pending['approval_id'])}` }).click();
      await expect
        .poll(() => page.getByRole('alert').textContent())
        .toMatch(new RegExp(`Approved ${String(pending['approval_id'])}, but its action failed: CIRCUIT_OPEN`));
      await context.close();
    } finally {
      await postJson(`${ui.gw.url}/admin/circuit-breakers/sink/reset`, {}, ui.admin);
    }
  });

  it('searches the audit trail by tenant and opens a record with its chain status', async () => {
    await ui.dispatch({ tenant: 'globex', action_type: 'invoice' });
    await ui.dispatch({ tenant: 'globex', action_type: 'receipt' });
    const { context, page } = await auditOfTenant('globex');
    await expect.poll(() => page.locator('tbody tr').count()).toBe(2);
    const tenants = await page.locator('tbody tr td:nth-child(2)').allTextContents();
    expect(tenants).toEqual(['globex', 'globex']);
    await page
      .getByRole('button', { name: /^Details of / })
      .first()
      .click();
    await expect.poll(() => page.getByTestId('chain-status').textContent()).toMatch(/chained|sequence/);
    await ui.screenshot(page, 'audit-record');
    await context.close();
  });

  it('pages the audit trail by cursor: Older shows the next records, Newer comes back', async () => {
    for (let i = 0; i < 30; i++) await ui.dispatch({ tenant: 'paging', action_type: `step-${i}` });
    const { context, page } = await auditOfTenant('paging');
    const actionTypes = () => page.locator('tbody tr td:nth-child(4)').allTextContents();
    await expect.poll(actionTypes).toHaveLength(25);
    const first = await actionTypes();
    await page.getByRole('button', { name: 'Older' }).click();
    await expect.poll(actionTypes).toHaveLength(5);
    // The two pages split the 30 records between them, none twice (dispatches in one millisecond may come in either order).
    expect(new Set([...first, ...(await actionTypes())]).size).toBe(30);
    expect(await page.getByRole('button', { name: 'Older' }).isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'Newer' }).click();
    await expect.poll(actionTypes).toEqual(first);
    await context.close();
  });

  it('a viewer sees no approve button, and the API refuses the viewer the decision', async () => {
    const pending = await ui.dispatch({ tenant: 'hooli', action_type: 'wire' });
    const { context, page } = await ui.openUi();
    await ui.signInWithKey(page, rawKey('viewer'));
    await ui.go(page, 'approvals');
    await page.getByRole('cell', { name: 'hooli' }).waitFor();
    expect(await page.getByRole('button', { name: /^Approve / }).count()).toBe(0);
    expect(await page.getByText('your role cannot decide').count()).toBeGreaterThan(0);
    // Nor a silence form, nor rule toggles that work.
    await ui.go(page, 'silences');
    expect(await page.getByRole('form', { name: 'New silence' }).count()).toBe(0);
    const path = `/v1/approvals/payments/hooli/${String(pending['approval_id'])}/decision`;
    const refused = await postJson(`${ui.gw.url}${path}`, { decision: 'approve' }, keyHeader('viewer'));
    expect(refused.status).toBe(403);
    expect(ui.sink.received.map((c) => c.id)).not.toContain(pending['action_id']);
    await context.close();
  });

  it('toggles a rule off and on, and evaluates an action in the playground with its trace', async () => {
    const enabled = async () => ((await requestJson('GET', `${ui.gw.url}/v1/rules/no-spam`, undefined, ui.admin)).body as { enabled: boolean }).enabled;
    const { context, page } = await ui.openUi();
    await ui.signInWithKey(page, rawKey('admin'));
    await ui.go(page, 'rules');
    const toggle = page.getByRole('switch', { name: 'Rule no-spam enabled' });
    await toggle.uncheck();
    await expect.poll(enabled).toBe(false);
    await toggle.check();
    await expect.poll(enabled).toBe(true);
    const playground = page.getByRole('form', { name: 'Evaluate an action against the rules' });
    await playground.getByLabel('Action type').fill('spam');
    await playground.getByRole('button', { name: 'Evaluate' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Verdict' }).textContent()).toMatch(/Verdict suppress by rule no-spam/);
    expect(await page.getByRole('table').last().getByRole('cell', { name: 'no-spam' }).count()).toBe(1);
    await ui.screenshot(page, 'rules-playground');
    await context.close();
  });

  it('draws a chain run as a graph with the steps it went through', async () => {
    const started = await ui.dispatch({ tenant: 'wayne', action_type: 'onboard' });
    expect(started['outcome']).toBe('chain_started');
    const chainId = String(started['chain_id']);
    await ui.chainCompleted(chainId);
    const { context, page } = await ui.openUi();
    await ui.signInWithKey(page, rawKey('admin'));
    await ui.go(page, 'chains');
    await page.getByRole('button', { name: `Graph of chain run ${chainId}` }).click();
    const graph = page.getByRole('img', { name: /^Graph of onboarding/ });
    await graph.waitFor();
    expect(await graph.getAttribute('aria-label')).toBe('Graph of onboarding: steps create-account, send-welcome');
    expect(await graph.locator('g.node.completed').count()).toBe(2);
    expect(await graph.locator('line.edge.taken').count()).toBe(1);
    await ui.screenshot(page, 'chain-graph');
    await context.close();
  });

  it('trips and resets a provider breaker from the Providers view', async () => {
    const state = async () =>
      (
        (await requestJson('GET', `${ui.gw.url}/v1/providers/health`, undefined, ui.admin)).body as {
          providers: { provider: string; circuit_breaker_state: string }[];
        }
      ).providers.find((p) => p.provider === 'sink')?.circuit_breaker_state;
    const { context, page } = await ui.openUi();
    await ui.signInWithKey(page, rawKey('admin'));
    await ui.go(page, 'providers');
    // success_rate is a percent already: shown as it is (it once read 10000.0%).
    const health = (await requestJson('GET', `${ui.gw.url}/v1/providers/health`, undefined, ui.admin)).body as {
      providers: { provider: string; success_rate: number }[];
    };
    const rate = health.providers.find((p) => p.provider === 'sink')?.success_rate as number;
    expect(rate).toBeGreaterThan(0);
    expect(rate).toBeLessThanOrEqual(100);
    await expect.poll(() => page.getByRole('row').filter({ hasText: 'sink' }).first().textContent()).toContain(`${rate.toFixed(1)}%`);
    await page.getByRole('button', { name: 'Trip breaker of sink' }).click();
    await expect.poll(state).toBe('open');
    await expect.poll(() => page.locator('.breaker.open').count()).toBe(1);
    await page.getByRole('button', { name: 'Reset breaker of sink' }).click();
    await expect.poll(state).toBe('closed');
    await context.close();
  });

  it("shows each quota's usage in its window as a bar", async () => {
    const { quotas } = (await requestJson('GET', `${ui.gw.url}/v1/quotas`, undefined, ui.admin)).body as { quotas: { id: string }[] };
    const id = quotas[0]?.id as string;
    const { used } = (await requestJson('GET', `${ui.gw.url}/v1/quotas/${id}/usage`, undefined, ui.admin)).body as { used: number };
    expect(used).toBeGreaterThan(0);
    const { context, page } = await ui.openUi();
    await ui.signInWithKey(page, rawKey('admin'));
    await ui.go(page, 'quotas');
    const bar = page.getByRole('progressbar', { name: new RegExp(`^Quota ${id}: \\d+ of 1000 used$`) });
    await bar.waitFor();
    expect(Number(await bar.getAttribute('value'))).toBeGreaterThanOrEqual(used);
    expect(await bar.getAttribute('max')).toBe('1000');
    await context.close();
  });

  it('logged no console error (no CSP refusal among them)', () => {
    // A refused sign-in logs the browser's own "Failed to load resource: 401"; nothing else may.
    expect(ui.consoleErrors.filter((e) => !/status of 401/.test(e))).toEqual([]);
  });
});
