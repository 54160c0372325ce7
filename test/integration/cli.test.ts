import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decryptValue } from '@sluice/auth';
import { describe, expect, it } from 'vitest';
import { freePort } from '../support/free-port.js';
import { runSluice, spawnSluice } from '../support/sluice-process.js';
import { sampleAction } from '../support/start-gateway.js';

function configFile(text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'sluice-cli-')), 'sluice.yaml');
  writeFileSync(file, text);
  return file;
}

describe('sluice CLI (built bin, real processes)', () => {
  it('serve with defaults answers /health and dispatches', async () => {
    const port = await freePort();
    const proc = await spawnSluice(['serve', '--port', String(port), '--host', '127.0.0.1'], { port });
    try {
      const health = (await (await fetch(`${proc.url}/health`)).json()) as { status: string };
      expect(health.status).toBe('ok');
      const res = await fetch(`${proc.url}/v1/dispatch`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(sampleAction()),
      });
      expect(await res.json()).toMatchObject({ outcome: 'executed' });
    } finally {
      proc.kill();
      expect((await proc.exited).code).toBe(0);
    }
  });

  it('refuses a config with an unknown key, naming it', async () => {
    const res = await runSluice(['serve', '--config', configFile('server:\n  prot: 1\n')]);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/server\.prot: unknown key/);
  });

  it('refuses worker and --no-worker on the memory backend', async () => {
    const worker = await runSluice(['worker']);
    expect(worker.code).toBe(2);
    expect(worker.stderr).toMatch(/needs state.backend: redis/);
    const api = await runSluice(['serve', '--no-worker']);
    expect(api.code).toBe(2);
    expect(api.stderr).toMatch(/--no-worker needs state.backend: redis/);
  });

  it('rejects unknown commands and bad flags', async () => {
    expect((await runSluice(['frobnicate'])).code).toBe(2);
    expect((await runSluice(['serve', '--port', 'abc'])).stderr).toMatch(/--port must be an integer/);
  });

  it('encrypt turns stdin into an ENC[...] value the key decrypts', async () => {
    const key = randomBytes(32);
    const res = await runSluice(['encrypt'], { env: { SLUICE_AUTH_KEY: key.toString('hex') }, stdin: 'hunter2\n' });
    expect(res.code).toBe(0);
    const wrapped = res.stdout.trim();
    expect(wrapped).toMatch(/^ENC\[AES256-GCM,data:/);
    expect(decryptValue(wrapped, key)).toBe('hunter2');
    const noKey = await runSluice(['encrypt'], { env: { SLUICE_AUTH_KEY: '' }, stdin: 'x' });
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toMatch(/SLUICE_AUTH_KEY/);
  });

  it('SIGTERM finishes the in-flight request, then exits 0', async () => {
    // A webhook target that answers only after a delay, so a dispatch is in flight at SIGTERM.
    let arrived!: () => void;
    const inFlight = new Promise<void>((r) => (arrived = r));
    const target = createServer((req, res) => {
      req.resume();
      arrived();
      setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"slow":true}'), 700);
    });
    await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
    const hook = `http://127.0.0.1:${(target.address() as AddressInfo).port}/`;
    const port = await freePort();
    const file = configFile(`providers:\n  - {name: slow, type: webhook, url: "${hook}"}\nserver:\n  shutdown_timeout_seconds: 10\n`);
    const proc = await spawnSluice(['serve', '--config', file, '--port', String(port), '--host', '127.0.0.1'], { port });
    try {
      const pending = fetch(`${proc.url}/v1/dispatch`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(sampleAction({ provider: 'slow' })),
      });
      await inFlight;
      proc.kill('SIGTERM');
      const res = await pending;
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ outcome: 'executed', response: { body: { slow: true } } });
      expect((await proc.exited).code).toBe(0);
    } finally {
      proc.kill('SIGKILL');
      target.close();
    }
  });
});
