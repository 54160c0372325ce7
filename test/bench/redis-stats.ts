/**
 * Server-side Redis numbers: INFO snapshots (commandstats, stats, cpu, memory) whose deltas
 * give commands per dispatch (commandstats counts the commands a Lua script runs, too), Redis
 * CPU and read events; and the memory held by live dedup keys, measured by deleting them.
 */
import { Redis } from 'ioredis';

export interface RedisSnapshot {
  /** calls per command name (lower case, subcommands as `config|resetstat`). */
  calls: Record<string, number>;
  /** Microseconds Redis spent in each command (INFO commandstats `usec`). */
  usec: Record<string, number>;
  readsProcessed: number;
  netInputBytes: number;
  cpuMs: number;
  usedMemory: number;
}

export interface RedisDelta {
  /** All commands executed, without this module's own INFO calls. */
  commands: number;
  byCommand: Record<string, number>;
  /** Microseconds spent in each command (a script's own time includes the commands it runs). */
  usecByCommand: Record<string, number>;
  readsProcessed: number;
  netInputBytes: number;
  cpuMs: number;
  usedMemoryBytes: number;
}

export interface DedupMemory {
  liveKeys: number;
  /** used_memory growth per key when the keys are copied into an empty database (everything, buckets too). */
  bytesPerKey: number;
  /** used_memory drop per key when they are deleted: key, value, main and expires dict entries, no buckets. */
  bytesPerKeyByDelete: number;
  /** Mean MEMORY USAGE of a sample (Redis's estimate; leaves out the expires entry). */
  bytesPerKeyMemoryUsage: number;
  sampleKey: string;
  sampleValueBytes: number;
}

const CHUNK = 1000;

/** The commands this module sends between two snapshots; excluded from the counts. */
const OWN_COMMANDS = new Set(['info']);

function parseInfo(text: string): RedisSnapshot {
  const fields = new Map<string, string>();
  const calls: Record<string, number> = {};
  const usec: Record<string, number> = {};
  for (const line of text.split('\r\n')) {
    const colon = line.indexOf(':');
    if (line.startsWith('#') || colon === -1) continue;
    const key = line.slice(0, colon);
    const value = line.slice(colon + 1);
    if (key.startsWith('cmdstat_')) {
      const name = key.slice('cmdstat_'.length);
      calls[name] = Number(/(?:^|,)calls=(\d+)/.exec(value)?.[1] ?? 0);
      usec[name] = Number(/(?:^|,)usec=(\d+)/.exec(value)?.[1] ?? 0);
    } else {
      fields.set(key, value);
    }
  }
  const num = (k: string) => Number(fields.get(k) ?? Number.NaN);
  return {
    calls,
    usec,
    readsProcessed: num('total_reads_processed'),
    netInputBytes: num('total_net_input_bytes'),
    cpuMs: (num('used_cpu_sys') + num('used_cpu_user')) * 1000,
    usedMemory: num('used_memory'),
  };
}

export class RedisStats {
  private constructor(private readonly client: Redis) {}

  static async connect(url: string): Promise<RedisStats> {
    const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, connectionName: 'sluice-bench-stats' });
    await client.connect();
    return new RedisStats(client);
  }

  async snapshot(): Promise<RedisSnapshot> {
    const text = await this.client.call('INFO', 'commandstats', 'stats', 'cpu', 'memory');
    return parseInfo(String(text));
  }

  /** Deltas of several servers (a Cluster's primaries) added up. */
  static sum(deltas: readonly RedisDelta[]): RedisDelta {
    const add = (into: Record<string, number>, from: Record<string, number>) => {
      for (const [name, n] of Object.entries(from)) into[name] = (into[name] ?? 0) + n;
    };
    const byCommand: Record<string, number> = {};
    const usecByCommand: Record<string, number> = {};
    for (const d of deltas) {
      add(byCommand, d.byCommand);
      add(usecByCommand, d.usecByCommand);
    }
    const total = (f: (d: RedisDelta) => number) => deltas.reduce((sum, d) => sum + f(d), 0);
    return {
      commands: total((d) => d.commands),
      byCommand,
      usecByCommand,
      readsProcessed: total((d) => d.readsProcessed),
      netInputBytes: total((d) => d.netInputBytes),
      cpuMs: total((d) => d.cpuMs),
      usedMemoryBytes: total((d) => d.usedMemoryBytes),
    };
  }

  static delta(after: RedisSnapshot, before: RedisSnapshot): RedisDelta {
    const byCommand: Record<string, number> = {};
    const usecByCommand: Record<string, number> = {};
    let commands = 0;
    for (const [name, n] of Object.entries(after.calls)) {
      const d = n - (before.calls[name] ?? 0);
      if (d <= 0 || OWN_COMMANDS.has(name)) continue;
      byCommand[name] = d;
      usecByCommand[name] = (after.usec[name] ?? 0) - (before.usec[name] ?? 0);
      commands += d;
    }
    return {
      commands,
      byCommand,
      usecByCommand,
      readsProcessed: after.readsProcessed - before.readsProcessed,
      netInputBytes: after.netInputBytes - before.netInputBytes,
      cpuMs: after.cpuMs - before.cpuMs,
      usedMemoryBytes: after.usedMemory - before.usedMemory,
    };
  }

  /** Keys matching a glob pattern (SCAN; fine for the ~10⁵ keys of a run). */
  async keys(pattern: string): Promise<string[]> {
    const found: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await this.client.scan(cursor, 'MATCH', pattern, 'COUNT', 5000);
      cursor = next;
      found.push(...batch);
    } while (cursor !== '0');
    return found;
  }

  /**
   * Memory per live dedup key, two ways. Copy: the keys, with their values and remaining TTLs,
   * are written into the empty database 1 of the same server; used_memory growth / keys counts
   * everything a key costs there, including its share of both hash tables' bucket arrays
   * (which grow in powers of two, so the share depends a little on the count). Delete: the
   * used_memory drop when the keys are deleted from database 0 (buckets are not freed then, so
   * this reads lower). Destructive: call it last, with no gateway running.
   */
  async dedupMemory(pattern: string): Promise<DedupMemory | null> {
    const keys = await this.keys(pattern);
    if (keys.length === 0) return null;
    const sample = keys.slice(0, 200);
    let usage = 0;
    for (const key of sample) usage += Number(await this.client.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'));

    const entries: { key: string; value: string; ttlMs: number }[] = [];
    for (let i = 0; i < keys.length; i += CHUNK) {
      const chunk = keys.slice(i, i + CHUNK);
      const pipeline = this.client.pipeline();
      for (const key of chunk) pipeline.get(key).pttl(key);
      const replies = (await pipeline.exec()) ?? [];
      chunk.forEach((key, k) => {
        const value = replies[2 * k]?.[1];
        const ttl = Number(replies[2 * k + 1]?.[1]);
        if (typeof value === 'string' && ttl > 0) entries.push({ key, value, ttlMs: ttl });
      });
    }
    const copy = this.client.duplicate({ db: 1 });
    let bytesPerKeyCopied = Number.NaN;
    try {
      await copy.flushdb();
      const empty = (await this.snapshot()).usedMemory;
      for (let i = 0; i < entries.length; i += CHUNK) {
        const pipeline = copy.pipeline();
        for (const e of entries.slice(i, i + CHUNK)) pipeline.set(e.key, e.value, 'PX', e.ttlMs);
        await pipeline.exec();
      }
      // Let an incremental rehash finish, so only one bucket array per table is counted.
      await new Promise((r) => setTimeout(r, 500));
      bytesPerKeyCopied = ((await this.snapshot()).usedMemory - empty) / Math.max(1, entries.length);
      await copy.flushdb();
    } finally {
      copy.disconnect();
    }

    const before = (await this.snapshot()).usedMemory;
    for (let i = 0; i < keys.length; i += CHUNK) await this.client.del(...keys.slice(i, i + CHUNK));
    const after = (await this.snapshot()).usedMemory;
    const sampleKey = sample[0] as string;
    return {
      liveKeys: keys.length,
      bytesPerKey: bytesPerKeyCopied,
      bytesPerKeyByDelete: (before - after) / keys.length,
      bytesPerKeyMemoryUsage: usage / sample.length,
      sampleKey,
      sampleValueBytes: Buffer.byteLength(entries[0]?.value ?? ''),
    };
  }

  async close(): Promise<void> {
    await this.client.quit().catch(() => this.client.disconnect());
  }
}
