import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { writeConfigFile } from '../support/config-file.js';
import { freePort } from '../support/free-port.js';
import { startSink, type HttpSink } from '../support/http-sink.js';
import { poll } from '../support/poll.js';
import { startRedisServer, type RunningRedis } from '../support/redis-server.js';
import { expectQuickCleanExit, spawnSluice, type SluiceProcess } from '../support/sluice-process.js';
import { sampleAction } from '../support/start-gateway.js';

type Body = Record<string, unknown>;

/** The repeatable jobs a worker declares (reaper, sweeps): BullMQ keeps each scheduler under a `repeat` key. */
async function scheduleKeys(url: string): Promise<string[]> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await client.connect();
    // Without the next run's timestamp: the same schedules, whenever they run next; nor a run's
    // lock, there only while that run is being processed.
    const keys = (await client.keys('*repeat*')).filter((k) => !k.endsWith(':lock'));
    return [...new Set(keys.map((k) => k.replace(/:\d+$/, '')))].sort();
  } finally {
    client.disconnect();
  }
}

/**
 * Redis goes away under a running `sluice serve` (API and worker in one process) and comes back
 * empty: dispatches answer 503 STATE_UNAVAILABLE with Retry-After and execute nothing, a record
 * whose write failed after its action ran is spooled and written on return, the schedules are
 * declared again, and every line the process wrote is a JSON log line.
 */
describe('Redis outage and recovery (real processes)', () => {
  let redis: RunningRedis;
  let sink: HttpSink;
  let proc: SluiceProcess;
  let port: number;
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${proc.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Body };
  };
  const get = async (path: string) => {
    const res = await fetch(`${proc.url}${path}`);
    return { status: res.status, body: (await res.json()) as Body };
  };

  beforeAll(async () => {
    redis = await startRedisServer();
    sink = await startSink();
    port = await freePort();
    const config = writeConfigFile(
      [
        'state:',
        '  backend: redis',
        `  url: "${redis.url}"`,
        'providers:',
        `  - {name: hook, type: webhook, url: "${sink.url}", timeout_ms: 10000}`,
        'server:',
        '  drain_delay_seconds: 0',
        '  shutdown_timeout_seconds: 10',
      ].join('\n'),
    );
    proc = await spawnSluice(['serve', '--config', config, '--port', String(port), '--host', '127.0.0.1'], { port, env: { SLUICE_LOGGING__LEVEL: 'info' } });
  });
  afterAll(async () => {
    proc?.kill('SIGKILL');
    await sink?.close();
    await redis?.stop();
  });

  it('goes through the outage and heals without anyone restarting anything', async () => {
    expect((await post('/v1/dispatch', sampleAction({ provider: 'hook' }))).body).toMatchObject({ outcome: 'executed' });
    const declared = await poll(
      'the worker to declare its schedules',
      () => scheduleKeys(redis.url),
      (keys) => keys.length > 0,
    );

    // A dispatch in flight when Redis goes: executed, its record spooled, and the answer says so.
    sink.delayMs = () => 1500;
    const inFlight = post('/v1/dispatch', sampleAction({ provider: 'hook', payload: { n: 'in-flight' } }));
    await poll(
      'the slow call to reach the provider',
      () => sink.received.length,
      (n) => n === 2,
    );
    await redis.stop();
    const spooled = await inFlight;
    expect(spooled.status).toBe(200);
    expect(spooled.body).toMatchObject({ outcome: 'executed', audit: 'deferred' });
    sink.delayMs = undefined;

    // While Redis is away: 503 with Retry-After, and nothing reaches the provider.
    const refused = await post('/v1/dispatch', sampleAction({ provider: 'hook', payload: { n: 'refused' } }));
    expect(refused.status).toBe(503);
    for (let i = 0; i < 20; i++) expect((await post('/v1/dispatch', sampleAction({ provider: 'hook' }))).status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('2');
    expect(refused.body).toMatchObject({ code: 'STATE_UNAVAILABLE', retry_after: 2 });
    expect(sink.received).toHaveLength(2);
    expect((await get('/ready')).status).toBe(503);
    // What an alert can read while no request arrives (readiness keeps them away).
    const up = async () => /^sluice_state_backend_up (\d)$/m.exec(await (await fetch(`${proc.url}/metrics`)).text())?.[1];
    expect(await up()).toBe('0');
    // A read that needs Redis: the same 503, not a 500.
    const read = await get(`/v1/audit?tenant=${sampleAction().tenant}`);
    expect(read).toMatchObject({ status: 503, body: { code: 'STATE_UNAVAILABLE' } });

    // Redis comes back empty on the same port.
    redis = await startRedisServer({ port: redis.port });
    await poll(
      'dispatches to succeed again',
      async () => (await post('/v1/dispatch', sampleAction({ provider: 'hook' }))).status,
      (s) => s === 200,
      {
        timeoutMs: 15_000,
      },
    );
    await poll(
      'the spooled record to be written',
      async () => (await get(`/v1/audit/${spooled.body.action_id}`)).status,
      (s) => s === 200,
      {
        timeoutMs: 15_000,
      },
    );
    expect(
      await poll(
        'the schedules to be declared again',
        () => scheduleKeys(redis.url),
        (keys) => keys.length >= declared.length,
        { timeoutMs: 15_000 },
      ),
    ).toEqual(declared);
    expect((await get('/ready')).status).toBe(200);
    expect(await up()).toBe('1');

    // Shutting down after the outage is as quick as before it.
    await expectQuickCleanExit(proc);
    // Every line is JSON (no plain-text errors from the job queue), and the outage was logged.
    const notJson = proc.output.filter((line) => {
      try {
        JSON.parse(line);
        return false;
      } catch {
        return true;
      }
    });
    expect(notJson).toEqual([]);
    expect(proc.output.some((line) => line.includes('schedules declared again'))).toBe(true);
    // The loss and the return, each said once.
    const said = (msg: string) => proc.output.filter((line) => (JSON.parse(line) as Record<string, unknown>)['msg'] === msg);
    expect(said('state backend unreachable')).toHaveLength(1);
    // Where it was connected: which Redis (behind Sentinels, which primary) went away.
    expect(JSON.parse(said('state backend unreachable')[0] ?? '{}')).toMatchObject({ level: 40, address: expect.stringMatching(/^[\d.:a-f]+:\d+$/) });
    expect(said('state backend reachable again')).toHaveLength(1);
    expect(JSON.parse(said('state backend reachable again')[0] ?? '{}')).toMatchObject({ level: 30, down_ms: expect.any(Number) });
    // 21 refusals, one reason: logged once (an outage under load would otherwise write a line per request).
    const refusals = proc.output.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line['msg'] === 'request refused');
    expect(refusals.length).toBeGreaterThan(0);
    expect(new Set(refusals.map((line) => line['reason'])).size).toBe(refusals.length);
  });
});

describe('shutting down while Redis is away (real processes)', () => {
  it('exits 0 within seconds: no part waits on a Redis that is not there', async () => {
    const redis = await startRedisServer();
    const port = await freePort();
    const config = writeConfigFile(['state:', '  backend: redis', `  url: "${redis.url}"`, 'server:', '  drain_delay_seconds: 0'].join('\n'));
    const proc = await spawnSluice(['serve', '--config', config, '--port', String(port), '--host', '127.0.0.1'], { port });
    try {
      await redis.stop();
      await poll(
        'the replica to notice',
        async () => (await fetch(`${proc.url}/ready`)).status,
        (s) => s === 503,
      );
      await expectQuickCleanExit(proc);
    } finally {
      proc.kill('SIGKILL');
      await redis.stop();
    }
  });
});

/** Its own Redis and a `sluice serve` (API and worker) whose schedule check runs every second. */
async function serveCheckingEverySecond(): Promise<{ redis: RunningRedis; proc: SluiceProcess }> {
  const redis = await startRedisServer();
  const port = await freePort();
  const config = writeConfigFile(
    ['state:', '  backend: redis', `  url: "${redis.url}"`, 'background:', '  schedule_check_interval_seconds: 1', 'server:', '  drain_delay_seconds: 0'].join(
      '\n',
    ),
  );
  return { redis, proc: await spawnSluice(['serve', '--config', config, '--port', String(port), '--host', '127.0.0.1'], { port }) };
}

describe('schedules lost under a running worker (real processes)', () => {
  it('declares the schedules again at the next check, with no reconnect to tell it', async () => {
    const { redis, proc } = await serveCheckingEverySecond();
    const admin = new Redis(redis.url);
    try {
      const declared = await poll(
        'the worker to declare its schedules',
        () => scheduleKeys(redis.url),
        (keys) => keys.length > 0,
      );
      // Not checked empty here: a check that read the marker just before the flush puts the
      // fixed schedules back at once (it re-declares them every time); the warn line below is
      // what says the flush was seen.
      await admin.flushall();
      expect(
        await poll(
          'the schedules to be declared again',
          () => scheduleKeys(redis.url),
          (keys) => keys.length >= declared.length,
          { timeoutMs: 10_000 },
        ),
      ).toEqual(declared);
      await poll(
        'the warn line (written after the declarations)',
        () => proc.output.some((line) => line.includes('schedules were gone from the state backend')),
        (seen) => seen,
      );
      await expectQuickCleanExit(proc);
    } finally {
      admin.disconnect();
      proc.kill('SIGKILL');
      await redis.stop();
    }
  });

  it("puts back a schedule's next run that BullMQ dropped, with the declared-marker still there", async () => {
    const { redis, proc } = await serveCheckingEverySecond();
    // The group sweep's queue, as the worker names it: its next run waits in the delayed set.
    const sweeps = new Queue('group-sweep', { connection: { url: redis.url }, prefix: '{sluice}:bull' });
    try {
      const [next] = await poll(
        'the group sweep to be scheduled',
        () => sweeps.getDelayed(),
        (jobs) => jobs.length === 1,
      );
      // What BullMQ's worker does on an error other than a lost connection: the run goes, the
      // schedule stays (BullMQ's API refuses to remove a scheduled run, so by hand).
      const admin = new Redis(redis.url);
      await admin
        .multi()
        .zrem('{sluice}:bull:group-sweep:delayed', String(next?.id))
        .del(`{sluice}:bull:group-sweep:${String(next?.id)}`)
        .exec();
      admin.disconnect();
      // Put back by the next check (1 s): a run of this schedule, not the one removed.
      const back = await poll(
        'the next run to be put back',
        () => sweeps.getDelayed(),
        (jobs) => jobs.length === 1 && jobs[0]?.id !== next?.id,
        { timeoutMs: 10_000 },
      );
      expect(back[0]?.repeatJobKey).toBe(next?.repeatJobKey);
    } finally {
      await sweeps.close();
      proc.kill('SIGKILL');
      await redis.stop();
    }
  });
});
