import { describe, expect, it } from 'vitest';
import { accessibilityViolations } from '../support/browser.js';
import { rawKey } from '../support/credentials.js';
import { DESKTOP, PHONE, uiFixture } from './ui-fixture.js';

const VIEWS = ['live', 'audit', 'analytics', 'rules', 'silences', 'approvals', 'groups', 'events', 'chains', 'providers', 'quotas'];

/*
 * How the UI renders, whatever the backend (so on memory only): every view with some data in it,
 * checked by axe-core at desktop and phone width, for horizontal overflow, from the keyboard, and
 * screenshotted (npm run ui:screenshots keeps them in docs/ui); no console error, a CSP refusal
 * being one.
 */
describe('admin UI rendering in Chromium', () => {
  const ui = uiFixture('memory');

  it('has data in every view to render', async () => {
    for (const action_type of ['send', 'spam', 'wire', 'invoice']) await ui.dispatch({ action_type });
    await ui.dispatch({ tenant: 'hooli', action_type: 'wire' });
    const started = await ui.dispatch({ action_type: 'onboard' });
    await ui.chainCompleted(String(started['chain_id']));
  });

  it.each([
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ] as const)('every view passes axe-core (WCAG A/AA) at %s width, fits the width, and is screenshotted', async (name, viewport) => {
    const { context, page } = await ui.openUi(viewport);
    expect(await accessibilityViolations(page)).toEqual([]);
    await ui.signInWithKey(page, rawKey('admin'));
    for (const view of VIEWS) {
      await ui.go(page, view);
      await page.waitForLoadState('networkidle').catch(() => undefined);
      expect({ view, violations: await accessibilityViolations(page) }).toEqual({ view, violations: [] });
      const overflow = await page.evaluate('document.documentElement.scrollWidth - window.innerWidth');
      expect({ view, overflow }).toEqual({ view, overflow: 0 });
      await ui.screenshot(page, `${view}${name === 'phone' ? '-phone' : ''}`, name === 'desktop');
    }
    await context.close();
  });

  it('is usable from the keyboard: the skip link, then the views by Tab and Enter', async () => {
    const { context, page } = await ui.openUi();
    await ui.signInWithKey(page, rawKey('admin'));
    // Signing in puts focus on the view; a page load starts at the top.
    await expect.poll(() => page.evaluate('document.activeElement?.id')).toBe('main');
    await page.reload();
    await page.getByTestId('identity').waitFor();
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement?.textContent')).toBe('Skip to content');
    await page.keyboard.press('Enter');
    expect(await page.evaluate('document.activeElement?.id')).toBe('main');
    expect(await page.evaluate('location.hash')).toBe('');
    // From the top again: the skip link, then the views.
    await page.reload();
    await page.getByTestId('identity').waitFor();
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement?.textContent')).toBe('Live');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.locator('#audit-title').waitFor();
    await context.close();
  });

  it('logged no console error (no CSP refusal among them)', () => {
    // A refused sign-in logs the browser's own "Failed to load resource: 401"; nothing else may.
    expect(ui.consoleErrors.filter((e) => !/status of 401/.test(e))).toEqual([]);
  });
});
