import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';
import { poll } from './poll.js';
import { stopServer, withNode } from './redis-node.js';
import { startRedisServer, waitForPort, type RunningRedis } from './redis-server.js';

export interface RunningRedisSentinel {
  /** `127.0.0.1:<port>` of each Sentinel. */
  sentinels: string[];
  /** The monitored primary's name. */
  name: string;
  /** The data nodes' password. */
  password: string;
  /** The Sentinels' own password, when started with `sentinelAuth`. */
  sentinelPassword: string | undefined;
  /** The two data nodes: the first primary, then its replica. */
  servers: RunningRedis[];
  /** The port of the primary the Sentinels name now. */
  primaryPort(): Promise<number>;
  stop(): Promise<void>;
}

/**
 * A replicated Redis watched by Sentinels, on free ports: one primary, one replica and three
 * Sentinels (quorum 2) that declare the primary down after 1 s. The data nodes require a
 * password, as production ones do; with `sentinelAuth` the Sentinels require one of their own.
 */
export async function startRedisSentinel(opts: { sentinelAuth?: boolean } = {}): Promise<RunningRedisSentinel> {
  const name = 'sluice-test';
  const password = 'sentinel-test-pw';
  const sentinelPassword = opts.sentinelAuth ? 'sentinels-own-pw' : undefined;
  const auth = ['--requirepass', password, '--masterauth', password];
  const primary = await startRedisServer({ args: auth });
  const replica = await startRedisServer({ args: [...auth, '--replicaof', '127.0.0.1', String(primary.port)] });
  const sentinels: { port: number; stop(): Promise<void> }[] = [];
  const stop = async () => {
    await Promise.all([...sentinels, primary, replica].map((s) => s.stop()));
  };
  try {
    for (let i = 0; i < 3; i++) sentinels.push(await startSentinel(name, primary.port, password, sentinelPassword));
    const nodes = sentinels.map((s) => `127.0.0.1:${s.port}`);
    const primaryPort = () => askPrimary(sentinels[0]?.port ?? 0, name, sentinelPassword);
    // Ready when the replica is in sync and every Sentinel knows the others (a failover needs a quorum).
    await poll(
      'the replica to sync and the Sentinels to meet',
      () =>
        ready(
          sentinels.map((s) => s.port),
          name,
          replica.port,
          password,
          sentinelPassword,
        ),
      {
        timeoutMs: 20_000,
        intervalMs: 100,
      },
    );
    return { sentinels: nodes, name, password, sentinelPassword, servers: [primary, replica], primaryPort, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function startSentinel(name: string, primaryPort: number, password: string, ownPassword?: string): Promise<{ port: number; stop(): Promise<void> }> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'sluice-sentinel-'));
  const file = join(dir, 'sentinel.conf');
  // Sentinel rewrites its own config file as it learns the topology: it must be writable.
  writeFileSync(
    file,
    [
      `port ${port}`,
      'bind 127.0.0.1',
      `dir ${dir}`,
      `sentinel monitor ${name} 127.0.0.1 ${primaryPort} 2`,
      `sentinel auth-pass ${name} ${password}`,
      `sentinel down-after-milliseconds ${name} 1000`,
      `sentinel failover-timeout ${name} 5000`,
      `sentinel parallel-syncs ${name} 1`,
      // Clients and the other Sentinels must present it.
      ...(ownPassword === undefined ? [] : [`requirepass ${ownPassword}`, `sentinel sentinel-pass ${ownPassword}`]),
      '',
    ].join('\n'),
  );
  const child = spawn('redis-server', [file, '--sentinel', '--loglevel', 'warning'], { stdio: ['ignore', 'ignore', 'inherit'] });
  await waitForPort(port, 10_000);
  return {
    port,
    stop: () => stopServer(child, dir),
  };
}

async function ready(sentinelPorts: readonly number[], name: string, replicaPort: number, password: string, sentinelPassword?: string): Promise<boolean> {
  const replication = await withNode(replicaPort, (n) => n.info('replication'), password).catch(() => '');
  if (!replication.includes('master_link_status:up')) return false;
  for (const port of sentinelPorts) {
    const known = await withNode(port, (n) => n.call('SENTINEL', 'SENTINELS', name) as Promise<unknown[]>, sentinelPassword).catch(() => []);
    if (known.length < sentinelPorts.length - 1) return false;
  }
  return true;
}

async function askPrimary(sentinelPort: number, name: string, sentinelPassword?: string): Promise<number> {
  const [, port] = (await withNode(sentinelPort, (n) => n.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name), sentinelPassword)) as [string, string];
  return Number(port);
}
