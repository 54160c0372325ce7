import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { REDIS_TOPOLOGIES, connectRedisStore, dropAndClose, type RedisTopology } from '../../../test/support/redis-topologies.js';
import { testRedisClusterNodes, testRedisUrl, uniquePrefix } from '../../../test/support/redis-url.js';
import { RACE } from './fixtures/race-config.js';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const childScript = fileURLToPath(new URL('./fixtures/race-child.ts', import.meta.url));

interface ChildResult {
  worker: string;
  windowAllowed: number;
  lockWins: number;
  lockValue: string | null;
  casIncrements: number;
  casRetries: number;
  appended: number;
  batchesApplied: number;
  batchesRefused: number;
}

interface Contender {
  child: ChildProcess;
  /** Resolves once the child is connected and waiting for "go". */
  ready: Promise<void>;
  /** The child's final JSON line; rejects if it exits without one. */
  result: Promise<ChildResult>;
}

function startChild(topology: RedisTopology, prefix: string, worker: string): Contender {
  const where = topology === 'redis' ? testRedisUrl() : `cluster:${testRedisClusterNodes().join(',')}`;
  const child = spawn(process.execPath, ['--conditions=sluice-source', '--import', 'tsx', childScript, where, prefix, worker], {
    cwd: repoRoot,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const messages: unknown[] = [];
  const waiters: (() => void)[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    messages.push(JSON.parse(line));
    for (const wake of waiters.splice(0)) wake();
  });
  const exited = new Promise<never>((_, reject) =>
    child.on('exit', (code) => reject(new Error(`race child ${worker} exited (${code}) after ${messages.length} lines: ${stderr}`))),
  );
  const nth = (n: number) =>
    Promise.race([
      new Promise<unknown>((resolve) => {
        const check = () => (messages.length > n ? resolve(messages[n]) : waiters.push(check));
        check();
      }),
      exited,
    ]);
  const ready = nth(0).then(() => undefined);
  const result = nth(1) as Promise<ChildResult>;
  result.catch(() => {}); // awaited by the test; avoid an unhandled rejection if `ready` fails first
  return { child, ready, result };
}

const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill();
});

describe.each(REDIS_TOPOLOGIES)('StateStore races across processes (%s)', (topology) => {
  it('settles every race in Redis when two processes hammer the same keys', async () => {
    const prefix = uniquePrefix();
    const started = [startChild(topology, prefix, 'A'), startChild(topology, prefix, 'B')];
    children.push(...started.map((s) => s.child));
    await Promise.all(started.map((s) => s.ready));
    for (const s of started) s.child.stdin?.end('go\n');
    const results = await Promise.all(started.map((s) => s.result));

    const sum = (f: (r: ChildResult) => number) => results.reduce((n, r) => n + f(r), 0);
    // Each process wanted more than the limit on its own, so both contended for every slot.
    expect(RACE.windowAttempts).toBeGreaterThan(RACE.windowLimit);
    expect(sum((r) => r.windowAllowed)).toBe(RACE.windowLimit);
    expect(sum((r) => r.lockWins)).toBe(1);
    expect(sum((r) => r.casIncrements)).toBe(2 * RACE.casIncrements);
    expect(sum((r) => r.appended)).toBe(2 * RACE.logMessages);
    // Batches were handed out twice (claims with no idle time) and some refused: the race happened.
    expect(sum((r) => r.batchesRefused)).toBeGreaterThan(0);

    const store = await connectRedisStore(topology, prefix);
    try {
      const key = (id: string, tenant = 't') => ({ kind: 'race', namespace: 'ns', tenant, id });
      expect((await store.readWindow(key('window'))).count).toBe(RACE.windowLimit);
      const winner = results.find((r) => r.lockWins === 1)?.lockValue;
      expect(await store.get(key('lock'))).toBe(winner);
      const counter = await store.getVersioned(key('counter'));
      expect(counter).toEqual({ value: String(2 * RACE.casIncrements), version: 2 * RACE.casIncrements });
      // Every message's writes applied exactly once, whichever consumer got it (or got it twice).
      expect(await store.get(key('log-count', 'u'))).toBe(String(2 * RACE.logMessages));
      expect(await store.indexCount(key('log-index', 'v'))).toBe(2 * RACE.logMessages);
      expect(await store.logLastId(key('log'))).toBeNull();
    } finally {
      await dropAndClose(store, prefix);
    }
  });
});
