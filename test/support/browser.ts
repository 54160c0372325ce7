import { existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

/** Debian's Chromium (`.ci/run` installs it); CHROMIUM_PATH overrides. */
function chromiumPath(): string {
  const path = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
  if (!existsSync(path)) throw new Error(`no Chromium at ${path}: apt-get install chromium, or set CHROMIUM_PATH`);
  return path;
}

/** A headless Chromium driven by playwright-core (root in CI containers: no sandbox), with extra command-line switches. */
export function launchChromium(...switches: string[]): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath(), args: ['--no-sandbox', '--disable-dev-shm-usage', ...switches] });
}

/** Where the tests save screenshots: UI_SCREENSHOT_DIR (`npm run ui:screenshots` points it at docs/ui), else a temp directory. */
export function screenshotDir(): string {
  const dir = process.env['UI_SCREENSHOT_DIR'] ?? mkdtempSync(join(tmpdir(), 'sluice-ui-'));
  mkdirSync(dir, { recursive: true });
  return dir;
}

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's serious and critical WCAG A/AA violations on the page as it stands (none is the bar). */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  // Evaluated over the DevTools protocol, so the page's CSP (no inline script) does not refuse it.
  if (!(await page.evaluate(`'axe' in window`))) await page.evaluate(AXE_SOURCE);
  // A string, run in the page: this file is compiled without the DOM's types.
  const violations = (await page.evaluate(
    `axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa'] } }).then((r) => r.violations)`,
  )) as AxeViolation[];
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.help}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}
