import { copyFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error the build script is plain JavaScript, shipped for operators (scripts/build-plugins.mjs)
import { buildPlugins } from '../../scripts/build-plugins.mjs';
import { rulesDir } from '../support/rules-dir.js';
import { BACKENDS, postJson, requestJson, sampleAction, startGateway, type RunningGateway } from '../support/start-gateway.js';

const RULES = `
rules:
  - { name: shouting, priority: 1, condition: { all: [{ field: action.action_type, eq: say }, { wasm_plugin: has-bang }] }, action: { type: suppress, reason: no shouting } }
  - { name: large, priority: 2, condition: { all: [{ field: action.action_type, eq: big }, { wasm_plugin: payload-limit, wasm_function: evaluate }] }, action: { type: suppress } }
  - { name: looping, priority: 3, condition: { all: [{ field: action.action_type, eq: spin }, { wasm_plugin: spin }] }, action: { type: suppress } }
`;

/** The example plugins and the test fixtures, compiled from their WebAssembly text into one directory. */
async function pluginDir(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-plugins-'));
  await buildPlugins('plugins/examples', dir);
  await buildPlugins('test/fixtures/plugins', dir);
  return dir;
}

describe.each(BACKENDS)('WASM plugin conditions (%s)', (backend) => {
  let gw: RunningGateway;
  let dir: string;
  const dispatch = async (action_type: string, payload: Record<string, unknown>) =>
    (await postJson(`${gw.url}/v1/dispatch`, sampleAction({ action_type, payload }))).body as { outcome: string; rule?: string };

  beforeAll(async () => {
    dir = await pluginDir();
    gw = await startGateway(backend, { wasm: { plugin_dir: dir, cpu_limit_ms: 100 }, rules: { directory: rulesDir({ 'plugins.yaml': RULES }) } });
  });
  afterAll(() => gw.close());

  it('lists the loaded plugins with their exports, and the files refused with the reason', async () => {
    const listed = (await requestJson('GET', `${gw.url}/v1/plugins`)).body as {
      plugins: { name: string; exports: string[] }[];
      errors: { file: string; message: string }[];
    };
    expect(listed.plugins.map((p) => p.name)).toEqual(['has-bang', 'payload-limit', 'spin']);
    expect(listed.plugins[0]?.exports).toEqual(['evaluate']);
    expect(listed.errors).toEqual([
      { file: 'greedy.wasm', message: expect.stringMatching(/declares 64 MB of memory; the limit is 16 MB/) },
      { file: 'writes-stdout.wasm', message: expect.stringMatching(/imports env\.fd_write/) },
    ]);
  });

  it('a plugin decides the condition', async () => {
    expect(await dispatch('say', { text: 'hello!' })).toMatchObject({ outcome: 'suppressed', rule: 'shouting' });
    expect((await dispatch('say', { text: 'hello' })).outcome).toBe('executed');
    expect((await dispatch('big', { text: 'x'.repeat(300) })).outcome).toBe('suppressed');
    expect((await dispatch('big', { text: 'x' })).outcome).toBe('executed');
  });

  it('stops a looping plugin at the CPU budget: the dispatch goes on with the safe default, and others are not held up', async () => {
    const started = Date.now();
    expect((await dispatch('spin', {})).outcome).toBe('executed');
    // Stopped at the 100 ms budget; the rest is the HTTP round trip and the thread's replacement.
    expect(Date.now() - started).toBeLessThan(250);
    const spinning = Array.from({ length: 20 }, () => dispatch('spin', {}));
    // A dispatch whose rules reach no plugin is not queued behind them.
    const plainStarted = Date.now();
    expect((await dispatch('other', {})).outcome).toBe('executed');
    // Queued behind the 20 spinning calls on the 2 threads it would wait ≈ 1 s; the margin is for a loaded machine.
    expect(Date.now() - plainStarted).toBeLessThan(500);
    expect((await Promise.all(spinning)).map((o) => o.outcome)).toEqual(Array(20).fill('executed'));
    // The pool replaced its threads: plugins still answer.
    expect((await dispatch('say', { text: 'again!' })).outcome).toBe('suppressed');
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(Number(/sluice_plugin_timeouts_total\{plugin="spin"\} (\d+)/.exec(metrics)?.[1])).toBeGreaterThanOrEqual(21);
  });
});

describe('WASM plugins: reload', () => {
  it('POST /v1/rules/reload re-reads the plugin directory and reports the files that did not load', async () => {
    const dir = await pluginDir();
    const gw = await startGateway('memory', { wasm: { plugin_dir: dir } });
    try {
      copyFileSync(join(dir, 'has-bang.wasm'), join(dir, 'bang-again.wasm'));
      const reloaded = (await postJson(`${gw.url}/v1/rules/reload`, {})).body as { errors: { file: string }[] };
      expect(reloaded.errors.map((e) => e.file)).toEqual(['greedy.wasm', 'writes-stdout.wasm']);
      const listed = (await requestJson('GET', `${gw.url}/v1/plugins`)).body as { plugins: { name: string }[] };
      expect(listed.plugins.map((p) => p.name)).toContain('bang-again');
    } finally {
      await gw.close();
    }
  });
});

describe('WASM plugins: rules naming a plugin that is not loaded', () => {
  it('are refused through the API (400) and reported by a reload when a file names one', async () => {
    const dir = await pluginDir();
    const ghostly = `rules:\n  - { name: ghostly, priority: 1, condition: { any: [{ field: action.action_type, eq: x }, { wasm_plugin: ghost }] }, action: { type: suppress } }\n`;
    const gw = await startGateway('memory', { wasm: { plugin_dir: dir }, rules: { directory: rulesDir({ 'ghost.yaml': ghostly }) } });
    try {
      const refused = await postJson(`${gw.url}/v1/rules`, { name: 'api-ghost', condition: { wasm_plugin: 'ghost' }, action: { type: 'suppress' } });
      expect(refused).toMatchObject({
        status: 400,
        body: { code: 'VALIDATION_FAILED', details: [{ path: 'condition.wasm_plugin', message: 'plugin ghost is not loaded' }] },
      });
      const noSuchFunction = await postJson(`${gw.url}/v1/rules`, {
        name: 'api-fn',
        condition: { wasm_plugin: 'has-bang', wasm_function: 'nope' },
        action: { type: 'suppress' },
      });
      expect(noSuchFunction.status).toBe(400);
      expect((await postJson(`${gw.url}/v1/rules`, { name: 'api-bang', condition: { wasm_plugin: 'has-bang' }, action: { type: 'suppress' } })).status).toBe(
        201,
      );
      const reloaded = (await postJson(`${gw.url}/v1/rules/reload`, {})).body as { errors: { rule?: string; message: string }[] };
      expect(reloaded.errors.filter((e) => e.rule === 'ghostly').map((e) => e.message)).toEqual([
        'condition.any.1.wasm_plugin: plugin ghost is not loaded; the condition is false until it loads',
      ]);
    } finally {
      await gw.close();
    }
  });
});

describe('WASM plugins off', () => {
  it('GET /v1/plugins is 404 and wasm_plugin rules do not load', async () => {
    const gw = await startGateway('memory', { rules: { directory: rulesDir({ 'plugins.yaml': RULES }) } });
    try {
      expect((await requestJson('GET', `${gw.url}/v1/plugins`)).status).toBe(404);
      expect(((await requestJson('GET', `${gw.url}/v1/rules`)).body as { rules: unknown[] }).rules).toHaveLength(0);
    } finally {
      await gw.close();
    }
  });
});
