import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeConfigFile } from '../support/config-file.js';
import { freePort } from '../support/free-port.js';
import { startSink, type HttpSink } from '../support/http-sink.js';
import { poll } from '../support/poll.js';
import { startRedisServer, type RunningRedis } from '../support/redis-server.js';
import { expectQuickCleanExit, spawnSluice, type SluiceProcess } from '../support/sluice-process.js';
import { sampleAction } from '../support/start-gateway.js';

type Body = Record<string, unknown>;

/**
 * Redis stalls under a running `sluice serve`: frozen with SIGSTOP, its connections stay open and
 * nothing resets them (a hung primary, a partition). A dispatch waiting on it is refused after
 * state.command_timeout_ms with 503 STATE_UNAVAILABLE and never executes, not even once Redis
 * wakes; it did wait until the client gave up, and ran after.
 */
describe('a stalled Redis (real processes)', () => {
  let redis: RunningRedis;
  let sink: HttpSink;
  let proc: SluiceProcess;
  const post = async (body: unknown) => {
    const res = await fetch(`${proc.url}/v1/dispatch`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Body };
  };

  beforeAll(async () => {
    redis = await startRedisServer();
    sink = await startSink();
    const port = await freePort();
    const config = writeConfigFile(
      [
        'state:',
        '  backend: redis',
        `  url: "${redis.url}"`,
        '  command_timeout_ms: 1000',
        'providers:',
        `  - {name: hook, type: webhook, url: "${sink.url}"}`,
        'server:',
        '  drain_delay_seconds: 0',
      ].join('\n'),
    );
    proc = await spawnSluice(['serve', '--config', config, '--port', String(port), '--host', '127.0.0.1'], { port });
  });
  afterAll(async () => {
    redis?.thaw();
    proc?.kill('SIGKILL');
    await sink?.close();
    await redis?.stop();
  });

  it('refuses a dispatch after the command timeout, executing nothing then or when Redis wakes', async () => {
    expect((await post(sampleAction({ provider: 'hook' }))).body).toMatchObject({ outcome: 'executed' });
    redis.freeze();
    const started = Date.now();
    const refused = await post(sampleAction({ id: 'during-stall', provider: 'hook' }));
    const waited = Date.now() - started;
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('2');
    expect(refused.body).toMatchObject({ code: 'STATE_UNAVAILABLE' });
    // One timeout, perhaps two commands in a row: nowhere near the minutes a stalled socket lasts.
    expect(waited).toBeGreaterThanOrEqual(900);
    expect(waited).toBeLessThan(5000);
    expect((await fetch(`${proc.url}/ready`)).status).toBe(503);

    redis.thaw();
    await poll(
      'dispatches to succeed again',
      async () => (await post(sampleAction({ provider: 'hook' }))).status,
      (s) => s === 200,
      { timeoutMs: 15_000 },
    );
    // What the stalled Redis ran on waking did not execute the refused action.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(sink.received.map((c) => c.id)).not.toContain('during-stall');
  });

  it('shuts down within seconds while Redis is stalled, exit 0: no part waits a command timeout, let alone one each', async () => {
    expect((await post(sampleAction({ provider: 'hook' }))).status).toBe(200);
    redis.freeze();
    await expectQuickCleanExit(proc, 10_000);
  });
});
