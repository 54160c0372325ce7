import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/free-port.js';
import { spawnSluice, type SluiceProcess } from '../support/sluice-process.js';

/*
 * What a default `sluice serve` (memory backend, auth and tracing off, the memory audit trail)
 * loads: none of the packages only another configuration uses. Each costs resident memory the
 * process would carry idle (docs/performance.md#idle-memory).
 */
const REGISTER_HOOKS = new URL('../fixtures/loaded-modules/register.mjs', import.meta.url).href;

/** Packages a default configuration never uses, and what loads them instead. */
const NOT_LOADED = {
  ioredis: 'state.backend redis',
  bullmq: 'state.backend redis',
  pg: 'audit.backend postgres',
  '@sluice/audit-postgres': 'audit.backend postgres',
  argon2: 'auth.enabled',
  jose: 'auth.enabled',
  '@opentelemetry/sdk-trace-node': 'telemetry.tracing.enabled',
  undici: 'the first webhook or LLM guardrail call',
};

describe('modules a default sluice serve loads', () => {
  let dir: string;
  let proc: SluiceProcess | undefined;
  let loaded: string[];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-idle-modules-'));
    const list = join(dir, 'loaded.txt');
    const port = await freePort();
    proc = await spawnSluice(['serve', '--port', String(port)], {
      port,
      env: {
        NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import ${REGISTER_HOOKS}`.trim(),
        SLUICE_TEST_LOADED_MODULES: list,
      },
    });
    // A dispatch: what the first request loads counts too.
    const res = await fetch(`${proc.url}/v1/dispatch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ namespace: 'ns', tenant: 't', provider: 'noop', action_type: 'x', payload: {} }),
    });
    expect(res.status).toBe(200);
    loaded = readFileSync(list, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((url) => (url.startsWith('file:') ? fileURLToPath(url) : url));
  });

  afterAll(async () => {
    proc?.kill();
    await proc?.exited;
    rmSync(dir, { recursive: true, force: true });
  });

  it('records what it loads (the hook works)', () => {
    expect(loaded.some((path) => path.includes('/node_modules/fastify/'))).toBe(true);
    expect(loaded.some((path) => path.includes('/libs/audit/'))).toBe(true);
  });

  it.each(Object.entries(NOT_LOADED))('does not load %s (only %s needs it)', (pkg) => {
    const found = loaded.filter((path) => path.includes(`/node_modules/${pkg}/`) || (pkg.startsWith('@sluice/') && path.includes(`/libs/${pkg.slice(8)}/`)));
    expect(found).toEqual([]);
  });
});
