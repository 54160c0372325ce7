import { describe, expect, it } from 'vitest';
import { rawKey } from '../support/credentials.js';
import { poll } from '../support/poll.js';
import { postJson, requestJson } from '../support/start-gateway.js';
import { DESKTOP, uiFixture } from './ui-fixture.js';

/*
 * The admin UI's states around its lists and buttons, in Chromium against a running gateway (the
 * memory backend: none of this depends on the backend): a change in flight, a load that failed,
 * long lists, a silence yet to start, a tenant-scoped operator, stale answers and errors, refresh.
 */
describe('admin UI states in Chromium', () => {
  const ui = uiFixture('memory');
  const signedIn = async (key = 'admin') => {
    const opened = await ui.openUi();
    await ui.signInWithKey(opened.page, rawKey(key));
    return opened;
  };
  const dispatchAll = async (count: number, overrides: (i: number) => Record<string, unknown>) => {
    for (let i = 0; i < count; i += 20) {
      await Promise.all(Array.from({ length: Math.min(20, count - i) }, (_, j) => ui.dispatch(overrides(i + j))));
    }
  };

  it('disables the decision buttons while one decision runs (a second press is not dropped unseen), then takes the next', async () => {
    const first = await ui.dispatch({ tenant: 'busy', action_type: 'wire' });
    const second = await ui.dispatch({ tenant: 'busy', action_type: 'wire' });
    const { context, page } = await signedIn();
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route(/\/decision$/, async (route) => {
      await held;
      await route.continue();
    });
    await ui.go(page, 'approvals');
    const approve = (a: Record<string, unknown>) => page.getByRole('button', { name: `Approve wire ${String(a['approval_id'])}` });
    await approve(first).click();
    await expect.poll(() => approve(second).isDisabled()).toBe(true);
    expect(await approve(first).getAttribute('aria-busy')).toBe('true');
    expect(await approve(second).getAttribute('aria-busy')).toBe('false');
    release();
    await expect.poll(() => approve(first).count()).toBe(0);
    await expect.poll(() => approve(second).isDisabled()).toBe(false);
    await approve(second).click();
    await poll('the sink to receive both approved actions', async () => [first, second].every((a) => ui.sink.received.some((c) => c.id === a['action_id'])));
    await context.close();
  });

  it('says the gateway is unreachable when a list cannot be read, with no "nothing waits" beside it', async () => {
    const { context, page } = await signedIn();
    await page.route(/\/v1\/approvals\?/, (route) => route.abort('failed'));
    await ui.go(page, 'approvals');
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/^Gateway unreachable/);
    expect(await page.getByText('Nothing waits for approval.').count()).toBe(0);
    await context.close();
  });

  it('pages chain runs (50 a page) and groups (100 a page) by offset, saying how many there are', async () => {
    await dispatchAll(51, () => ({ tenant: 'paged', action_type: 'onboard' }));
    await dispatchAll(101, (i) => ({ tenant: 'paged', action_type: 'digest', payload: { cluster: `c${i}` } }));
    const { context, page } = await signedIn();
    const rows = () => page.locator('tbody tr').count();
    for (const [view, label, total, size] of [
      ['chains', 'chain runs', 51, 50],
      ['groups', 'groups', 101, 100],
    ] as const) {
      await ui.go(page, view);
      const filters = page.getByRole('form', { name: view === 'chains' ? 'Chain filters' : 'Group filters' });
      await filters.getByLabel('Tenant').fill('paged');
      await filters.getByRole('button', { name: 'Apply' }).click();
      const pages = page.getByRole('navigation', { name: `Pages of ${label}` });
      await expect.poll(() => pages.textContent()).toContain(`Showing 1–${size} of ${total}.`);
      expect(await rows()).toBe(size);
      await pages.getByRole('button', { name: 'Next' }).click();
      await expect.poll(() => pages.textContent()).toContain(`Showing ${size + 1}–${total} of ${total}.`);
      expect(await rows()).toBe(total - size);
      expect(await pages.getByRole('button', { name: 'Next' }).isDisabled()).toBe(true);
      await pages.getByRole('button', { name: 'Previous' }).click();
      await expect.poll(rows).toBe(size);
    }
    await context.close();
  });

  it('shows a silence that has not started yet as pending, with its start', async () => {
    const starts = new Date(Date.now() + 2 * 3600_000).toISOString();
    const body = { namespace: 'payments', tenant: 'later', comment: 'tonight window', starts_at: starts, duration_seconds: 3600 };
    const created = await postJson(`${ui.gw.url}/v1/silences`, { ...body, matchers: [{ name: 'env', op: 'equal', value: 'prod' }] }, ui.admin);
    expect(created.status).toBe(201);
    const listed = (await requestJson('GET', `${ui.gw.url}/v1/silences?tenant=later`, undefined, ui.admin)).body as { silences: { active: boolean }[] };
    expect(listed.silences.map((s) => s.active)).toEqual([false]);
    const { context, page } = await signedIn();
    await ui.go(page, 'silences');
    const row = page.getByRole('row').filter({ hasText: 'tonight window' });
    await expect.poll(() => row.locator('td[data-label="Status"]').textContent()).toBe('pending');
    expect(await row.locator('td[data-label="Starts"] time').getAttribute('datetime')).toBe(starts);
    await context.close();
  });

  it('gives a tenant-scoped operator no rule switch or breaker button the API would refuse (403)', async () => {
    const refused = await requestJson('PUT', `${ui.gw.url}/v1/rules/no-spam/enabled`, { enabled: false }, { authorization: `Bearer ${rawKey('scoped')}` });
    expect(refused.status).toBe(403);
    const { context, page } = await signedIn('scoped');
    await ui.go(page, 'rules');
    const toggle = page.getByRole('switch', { name: 'Rule no-spam enabled' });
    await toggle.waitFor();
    expect(await toggle.isDisabled()).toBe(true);
    await ui.go(page, 'providers');
    await page.getByRole('cell', { name: 'sink' }).waitFor();
    await page.waitForLoadState('networkidle');
    expect(await page.getByRole('button', { name: /^(Trip|Reset) breaker of / }).count()).toBe(0);
    await context.close();
  });

  it('clears the playground verdict when a new evaluation starts, so an error does not stand under the old verdict', async () => {
    const { context, page } = await signedIn();
    await ui.go(page, 'rules');
    const playground = page.getByRole('form', { name: 'Evaluate an action against the rules' });
    await playground.getByLabel('Action type').fill('spam');
    await playground.getByRole('button', { name: 'Evaluate' }).click();
    const verdict = page.getByRole('status').filter({ hasText: 'Verdict' });
    await verdict.waitFor();
    await playground.getByLabel('Payload (JSON)').fill('{ not json');
    await playground.getByRole('button', { name: 'Evaluate' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/JSON/);
    expect(await verdict.count()).toBe(0);
    expect(await page.getByRole('table', { name: 'Evaluation trace' }).count()).toBe(0);
    await context.close();
  });

  it('labels hourly buckets with their minutes (a zone half an hour off UTC starts its hours at :30)', async () => {
    await ui.dispatch({ action_type: 'send' });
    const { context, page } = await ui.openUi(DESKTOP, { timezoneId: 'Asia/Kolkata', locale: 'en-GB' });
    await ui.signInWithKey(page, rawKey('admin'));
    await ui.go(page, 'analytics');
    const chart = page.getByRole('img', { name: /^Volume by outcome/ });
    await expect.poll(() => chart.getAttribute('aria-label')).toMatch(/, from .*\d\d:30 to .*\d\d:30$/);
    await context.close();
  });

  it('refreshes a list by its Refresh button and by following the current view link again', async () => {
    const silence = (comment: string) =>
      postJson(
        `${ui.gw.url}/v1/silences`,
        { namespace: 'payments', tenant: 'fresh', comment, duration_seconds: 600, matchers: [{ name: 'env', op: 'equal', value: 'dev' }] },
        ui.admin,
      );
    const { context, page } = await signedIn();
    await ui.go(page, 'silences');
    await page.getByRole('heading', { name: 'Silences' }).waitFor();
    await page.waitForLoadState('networkidle');
    await silence('made after the list was read');
    await page.getByRole('button', { name: 'Refresh' }).click();
    await page.getByRole('cell', { name: 'made after the list was read' }).waitFor();
    await silence('made after the refresh');
    await ui.go(page, 'silences');
    await page.getByRole('cell', { name: 'made after the refresh' }).waitFor();
    await context.close();
  });

  it("clears a refused silence's error when the form changes", async () => {
    const { context, page } = await signedIn();
    await ui.go(page, 'silences');
    const form = page.getByRole('form', { name: 'New silence' });
    await form.getByLabel('Namespace').fill('payments');
    await form.getByLabel('Tenant').fill('refused');
    await form.getByLabel('Comment').fill('a bad pattern');
    const matcher = form.getByRole('group', { name: 'Matcher 1' });
    await matcher.getByLabel('Label').fill('service');
    await matcher.getByLabel('Operator').selectOption('regex');
    await matcher.getByLabel('Value').fill('db-(');
    await form.getByRole('button', { name: 'Create silence' }).click();
    await form.getByRole('alert').waitFor();
    await matcher.getByLabel('Value').fill('db-.*');
    await expect.poll(() => form.getByRole('alert').count()).toBe(0);
    await context.close();
  });

  it('names the group of a group_flushed event in Live', async () => {
    const { context, page } = await signedIn();
    await page.locator('[data-connection="live"]').waitFor();
    await ui.dispatch({ tenant: 'flushed', action_type: 'digest', payload: { cluster: 'east' } });
    const { groups } = (await requestJson('GET', `${ui.gw.url}/v1/groups?tenant=flushed`, undefined, ui.admin)).body as { groups: { group_key: string }[] };
    const key = groups[0]?.group_key as string;
    expect((await requestJson('DELETE', `${ui.gw.url}/v1/groups/${key}`, undefined, ui.admin)).status).toBe(200);
    const row = page.getByRole('row').filter({ hasText: 'group_flushed' });
    await expect.poll(() => row.locator('td[data-label="Id"]').textContent()).toBe(key);
    await context.close();
  });

  it('keeps the Live list and the events Pause holds when the stream is cut and opened again', async () => {
    const { context, page } = await signedIn();
    await page.locator('[data-connection="live"]').waitFor();
    const shown = await ui.dispatch({ action_type: 'before-cut' });
    await page.getByRole('cell', { name: String(shown['action_id']) }).waitFor();
    await page.getByRole('button', { name: 'Pause' }).click();
    const held = await ui.dispatch({ action_type: 'held-over-cut' });
    await page.getByRole('button', { name: 'Resume (1 new)' }).waitFor();
    // The connection cut under the stream, as a proxy or a network drop would.
    ui.gw.app.server.closeAllConnections();
    await page.locator('[data-connection="closed"]').waitFor();
    await page.locator('[data-connection="live"]').waitFor({ timeout: 10_000 });
    expect(await page.getByRole('cell', { name: String(shown['action_id']) }).count()).toBe(1);
    await page.getByRole('button', { name: 'Resume (1 new)' }).click();
    await page.getByRole('cell', { name: String(held['action_id']) }).waitFor();
    await context.close();
  });

  it("lists a * quota policy without a usage (it counts each tenant apart) and keeps the other policies' bars", async () => {
    const everyone = { id: 'everyone-ui', namespace: '*', tenant: '*', max_actions: 500, window: 'daily' };
    expect((await postJson(`${ui.gw.url}/v1/quotas`, everyone, ui.admin)).status).toBe(201);
    const { context, page } = await signedIn();
    try {
      await ui.go(page, 'quotas');
      await page.getByText('counted for each tenant and namespace apart').waitFor();
      // The acme policy's usage still shows: one row that cannot have a usage does not blank the view.
      await page.getByRole('progressbar', { name: /^Quota .+: \d+ of 1000 used$/ }).waitFor();
      expect(await page.getByRole('alert').count()).toBe(0);
    } finally {
      await context.close();
      await requestJson('DELETE', `${ui.gw.url}/v1/quotas/${everyone.id}`, undefined, ui.admin);
    }
  });

  it('says when the breaker list cannot be read, rather than showing no breaker buttons without a word', async () => {
    const { context, page } = await signedIn();
    try {
      await page.route(/\/admin\/circuit-breakers$/, (route) =>
        route.fulfill({
          status: 503,
          contentType: 'application/json',
          body: JSON.stringify({ error: 'state backend unavailable', code: 'STATE_UNAVAILABLE' }),
        }),
      );
      await ui.go(page, 'providers');
      await page.getByRole('alert').filter({ hasText: 'state backend unavailable' }).waitFor();
    } finally {
      await context.close();
    }
  });

  it('logged no console error but the refused requests the tests made fail', () => {
    // The browser logs the 401 of the first call without a credential, a request the test aborted (net::ERR_FAILED), the stream it cut
    // (net::ERR_INCOMPLETE_CHUNKED_ENCODING), the 400 to the bad pattern and the 503 the test made up.
    expect(ui.consoleErrors.filter((e) => !/ERR_FAILED|ERR_INCOMPLETE_CHUNKED_ENCODING|status of (40[01]|503)/.test(e))).toEqual([]);
  });
});
