import { capturedLogLines } from '../../../test/support/log-lines.js';
import { Histogram, type Counter, type Gauge } from 'prom-client';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { logThrottle } from './log-throttle.js';
import { createLogger } from './logger.js';
import { METRICS, type MetricSpec } from './metric-table.js';
import { Metrics } from './metrics.js';

describe('the metric table', () => {
  const fields = Object.keys(METRICS) as (keyof typeof METRICS)[];

  it('puts every row on the exposition with its name, help, type and label set', async () => {
    const metrics = new Metrics({ defaultMetrics: false });
    for (const field of fields) {
      const spec: MetricSpec = METRICS[field];
      const labels = Object.fromEntries((spec.labelNames ?? []).map((l) => [l, 'x']));
      const metric: Counter | Gauge | Histogram = metrics[field];
      if (metric instanceof Histogram) metric.observe(labels, 1);
      else metric.inc(labels, 1);
    }
    const text = await metrics.prometheusText();
    for (const field of fields) {
      const spec: MetricSpec = METRICS[field];
      const labels = (spec.labelNames ?? []).map((l) => `${l}="x"`).join(',');
      const sample = spec.type === 'histogram' ? `${spec.name}_count` : spec.name;
      expect(text, field).toContain(`# HELP ${spec.name} ${spec.help}\n# TYPE ${spec.name} ${spec.type}\n`);
      expect(text, field).toContain(`\n${sample}${labels ? `{${labels}}` : ''} 1\n`);
    }
  });

  it('tells a dispatch of 100 s (four attempts at the default 30 s timeout) from one of 40 s', async () => {
    const metrics = new Metrics({ defaultMetrics: false });
    metrics.dispatchDuration.observe({ outcome: 'failed' }, 40);
    metrics.dispatchDuration.observe({ outcome: 'failed' }, 100);
    const text = await metrics.prometheusText();
    expect(text).toContain('sluice_dispatch_duration_seconds_bucket{le="60",outcome="failed"} 1\n');
    expect(text).toContain('sluice_dispatch_duration_seconds_bucket{le="120",outcome="failed"} 2\n');
  });

  it('names every metric once, under the sluice_ prefix', () => {
    const names = fields.map((f) => METRICS[f].name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(/^sluice_[a-z_]+$/);
  });
});

describe('Metrics recorders', () => {
  it('write exactly what direct prom-client calls write', async () => {
    const cached = new Metrics({ defaultMetrics: false });
    const direct = new Metrics({ defaultMetrics: false });
    const calls: [string, string, number, string, string, number, number][] = [
      ['POST', '/v1/dispatch', 200, 'executed', 'email', 0.0004, 3],
      ['POST', '/v1/dispatch', 200, 'suppressed', 'email', 0.02, 0.2],
      ['GET', 'unmatched', 404, 'failed', 'hook', 7, 12_000],
      ['POST', '/v1/dispatch', 429, 'executed', 'email', 0.0011, 0.9],
      ['GET', '/v1/x y', 200, 'dry_run', 'noop', 40, 1],
    ];
    for (const [method, route, status, outcome, provider, seconds, ms] of calls) {
      for (let i = 0; i < 3; i++) {
        cached.recordHttpRequest(method, route, status, seconds);
        cached.recordDispatch(outcome, seconds);
        cached.observe(provider, i === 1 ? 'failure' : 'success', ms);
        direct.httpRequests.inc({ method, route, status: String(status) });
        direct.httpDuration.observe({ method, route }, seconds);
        direct.recordDispatch(outcome, 0); // keeps the JSON counters in step; the samples are replaced below
        direct.providerRequests.inc({ provider, result: i === 1 ? 'failure' : 'success' });
        direct.providerDuration.observe({ provider }, ms / 1000);
      }
    }
    // recordDispatch's prom-client samples, the way it wrote them before.
    direct.actions.reset();
    direct.dispatchDuration.reset();
    for (const [, , , outcome, , seconds] of calls) {
      for (let i = 0; i < 3; i++) {
        direct.actions.inc({ outcome });
        direct.dispatchDuration.observe({ outcome }, seconds);
      }
    }
    expect(await cached.prometheusText()).toBe(await direct.prometheusText());
    expect(cached.snapshot()).toEqual(direct.snapshot());
  });
});

describe('logger timestamps', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('are the ISO time of each line, also when lines share a millisecond', () => {
    const { destination, lines } = capturedLogLines();
    const logger = createLogger({ level: 'info', role: 'test', destination });
    vi.useFakeTimers({ toFake: ['Date'] });
    const times = [Date.UTC(2026, 0, 1), Date.UTC(2026, 0, 1), Date.UTC(2026, 0, 1) + 1, Date.UTC(2027, 5, 6, 7, 8, 9, 10), Date.UTC(2026, 0, 1)];
    for (const t of times) {
      vi.setSystemTime(t);
      logger.info('x');
    }
    expect(lines.map((l) => l.time)).toEqual(times.map((t) => new Date(t).toISOString()));
  });
});

describe('logged errors', () => {
  it('keep the name of a failed Redis command but not its arguments (a refused audit write carries the whole record)', () => {
    const { destination, lines } = capturedLogLines();
    const logger = createLogger({ level: 'info', role: 'test', destination });
    const refused = Object.assign(new Error('OOM command not allowed when used memory > maxmemory'), {
      command: { name: 'evalsha', args: ['sha', '1', 'key', JSON.stringify({ payload: { card: 'p'.repeat(100_000) } })] },
    });
    logger.warn({ err: refused }, 'audit write failed; record spooled');
    const line = lines[0] as { err: Record<string, unknown> };
    expect(line.err).toMatchObject({ message: refused.message, command: { name: 'evalsha', args_count: 4 } });
    expect(JSON.stringify(line).length).toBeLessThan(5_000);
  });

  it('leave out the stack of the state backend being away (not a bug), and keep it for anything else', () => {
    const { destination, lines } = capturedLogLines();
    const logger = createLogger({ level: 'info', role: 'test', destination });
    logger.warn({ err: new Error("Stream isn't writeable and enableOfflineQueue options is false") }, 'poll failed');
    logger.warn({ err: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' }) }, 'poll failed');
    logger.warn({ err: new TypeError('x is not a function') }, 'poll failed');
    const errs = lines.map((l) => (l as { err: Record<string, unknown> }).err);
    expect(errs.map((e) => e.stack === undefined)).toEqual([true, true, false]);
    expect(errs[1]).toMatchObject({ message: 'connect ECONNREFUSED 127.0.0.1:6379', code: 'ECONNREFUSED' });
  });

  it("drop the arguments of the errors an error carries too (AggregateError, a transaction's previousErrors)", () => {
    const { destination, lines } = capturedLogLines();
    const logger = createLogger({ level: 'info', role: 'test', destination });
    const refused = () => Object.assign(new Error('OOM'), { command: { name: 'set', args: ['k', 'SECRET-PAYLOAD'] } });
    logger.warn({ err: new AggregateError([refused(), refused()], 'all failed') }, 'x');
    logger.warn({ err: Object.assign(new Error('EXECABORT'), { previousErrors: [refused()] }) }, 'y');
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(JSON.stringify(line)).not.toContain('SECRET-PAYLOAD');
    expect((lines[0] as { err: { aggregateErrors: unknown[] } }).err.aggregateErrors[1]).toMatchObject({ command: { name: 'set', args_count: 2 } });
  });
});

describe('the scrape and the queues', () => {
  it('answers within a second without the queue series when the queues do not answer (Redis stalled), and with them when they do', async () => {
    const metrics = new Metrics({ defaultMetrics: false });
    metrics.trackQueues(() => new Promise(() => {}));
    metrics.refreshOnScrape(() => new Promise(() => {}));
    const started = Date.now();
    const text = await metrics.prometheusText();
    // One deadline for every read, not one after another.
    expect(Date.now() - started).toBeLessThan(1500);
    expect(text).not.toMatch(/^sluice_queue_jobs\{/m);
    metrics.trackQueues(async () => [{ queue: 'group-flush', state: 'waiting', count: 3 }]);
    expect(await metrics.prometheusText()).toMatch(/^sluice_queue_jobs\{queue="group-flush",state="waiting"\} 3$/m);
  });
});

describe('logThrottle', () => {
  it('lets one line per key through each window and tells how many it held back', () => {
    let now = 0;
    const pass = logThrottle(30_000, () => now);
    expect([pass('a'), pass('a'), pass('b'), pass('a')]).toEqual([0, null, 0, null]);
    now = 30_000;
    expect([pass('a'), pass('a'), pass('b')]).toEqual([2, null, 0]);
  });

  it('forgets the key idle longest when full, so a flood of new keys does not release one just logged', () => {
    let now = 0;
    const pass = logThrottle(30_000, () => now);
    for (let i = 0; i < 9_999; i++) pass(`junk${i}`);
    now = 1;
    expect(pass('failing-provider')).toBe(0); // the table is full now
    for (let i = 0; i < 5; i++) pass(`new${i}`);
    expect(pass('failing-provider')).toBeNull(); // still held back
    expect(pass('junk0')).toBe(0); // forgotten: it was idle longest
  });
});
