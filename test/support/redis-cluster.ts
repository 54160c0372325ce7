import { spawn, spawnSync } from 'node:child_process';
import { poll } from './poll.js';
import { withNode } from './redis-node.js';
import { startRedisServer, type RunningRedis } from './redis-server.js';

export interface RunningRedisCluster {
  /** `127.0.0.1:<port>` of every node, primaries first (the seed list for clients). */
  nodes: string[];
  /** Every node's server, primaries first; a replica follows the primaries in creation order. */
  servers: RunningRedis[];
  /** The Redis errors every node has answered, by error prefix (INFO errorstats): `CROSSSLOT` must stay absent. */
  errorCounts(): Promise<Record<string, number>>;
  /** Ports of the nodes that are primaries now, with their slot ranges, as a live node sees them. */
  primaries(): Promise<{ port: number; slots: string[] }[]>;
  /** Moves `slots` hash slots (and their keys) from one primary to another with `redis-cli --cluster reshard`. */
  reshard(fromPort: number, toPort: number, slots: number): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A private Redis Cluster on free ports: `primaries` primaries (3 at least, as Redis requires)
 * with `replicas` replicas each, created by `redis-cli --cluster create`, resolved once every node
 * reports `cluster_state:ok`. A short node timeout (1 s) makes failover tests quick.
 */
export async function startRedisCluster(opts: { primaries?: number; replicas?: number } = {}): Promise<RunningRedisCluster> {
  const primaries = opts.primaries ?? 3;
  const replicas = opts.replicas ?? 0;
  const servers: RunningRedis[] = [];
  const stop = async () => {
    await Promise.all(servers.map((s) => s.stop()));
  };
  try {
    for (let i = 0; i < primaries * (1 + replicas); i++) {
      servers.push(
        await startRedisServer({
          args: ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '1000', '--cluster-require-full-coverage', 'no'],
        }),
      );
    }
    const nodes = servers.map((s) => `127.0.0.1:${s.port}`);
    const created = spawnSync('redis-cli', ['--cluster', 'create', ...nodes, '--cluster-replicas', String(replicas), '--cluster-yes'], { encoding: 'utf8' });
    if (created.status !== 0) throw new Error(`redis-cli --cluster create failed: ${created.stdout}${created.stderr}`);
    await poll('every node of the Redis Cluster to report cluster_state:ok', () => allOk(servers), { timeoutMs: 20_000, intervalMs: 100 });
    return {
      nodes,
      servers,
      errorCounts: () => redisErrorCounts(nodes),
      primaries: () => primariesOf(servers),
      reshard: (fromPort, toPort, slots) => reshard(fromPort, toPort, slots),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function primariesOf(servers: readonly RunningRedis[]): Promise<{ port: number; slots: string[] }[]> {
  for (const server of servers) {
    const table = await withNode(server.port, (node) => node.call('CLUSTER', 'NODES') as Promise<string>).catch(() => null);
    if (table === null) continue;
    // <id> <ip:port@bus> <flags> <primary> <ping> <pong> <epoch> <link> <slot> ...
    return table
      .split('\n')
      .map((line) => line.split(' '))
      .filter((f) => (f[2] ?? '').split(',').includes('master') && !(f[2] ?? '').includes('fail'))
      .map((f) => ({ port: Number((f[1] ?? '').split('@')[0]?.split(':')[1]), slots: f.slice(8) }))
      .filter((p) => p.slots.length > 0);
  }
  throw new Error('no node of the Redis Cluster answers');
}

async function reshard(fromPort: number, toPort: number, slots: number): Promise<void> {
  const [from, to] = await Promise.all([fromPort, toPort].map((port) => withNode(port, (node) => node.call('CLUSTER', 'MYID') as Promise<string>)));
  const args = ['--cluster', 'reshard', `127.0.0.1:${fromPort}`, '--cluster-from', String(from), '--cluster-to', String(to)];
  const moved = await new Promise<{ code: number | null; output: string }>((resolve) => {
    const child = spawn('redis-cli', [...args, '--cluster-slots', String(slots), '--cluster-yes'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.on('exit', (code) => resolve({ code, output }));
  });
  if (moved.code !== 0) throw new Error(`redis-cli --cluster reshard failed: ${moved.output.slice(-2000)}`);
}

async function allOk(servers: readonly RunningRedis[]): Promise<boolean> {
  const states = await Promise.all(servers.map((s) => clusterInfo(s.port).catch(() => '')));
  return states.every((info) => info.includes('cluster_state:ok') && info.includes('cluster_slots_ok:16384'));
}

async function clusterInfo(port: number): Promise<string> {
  return withNode(port, (node) => node.cluster('INFO'));
}

/** Errors answered so far by the nodes (`host:port`), summed by error prefix (INFO errorstats). */
export async function redisErrorCounts(nodes: readonly string[]): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const address of nodes) {
    // A node a test killed answers nothing, and has nothing more to count.
    const info = await withNode(Number(address.split(':')[1]), (node) => node.info('errorstats')).catch(() => '');
    for (const m of info.matchAll(/^errorstat_([A-Z]+):count=(\d+)/gm)) {
      const name = m[1] ?? '';
      counts[name] = (counts[name] ?? 0) + Number(m[2]);
    }
  }
  return counts;
}
