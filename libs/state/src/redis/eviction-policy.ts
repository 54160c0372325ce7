import { isCluster, type RedisClient } from './connection.js';

/**
 * The maxmemory-policy of every primary the client writes to that has a memory limit. Any other
 * policy than noeviction lets a full Redis drop keys: a dedup key (the same action runs twice), an
 * audit record of an acknowledged dispatch, a queued job. Without a limit (maxmemory 0) nothing
 * is evicted, whatever the policy. Read from INFO, which the scheduler needs anyway (CONFIG is
 * often renamed or refused on managed Redis).
 */
async function evictionPolicies(client: RedisClient): Promise<string[]> {
  const primaries = isCluster(client) ? client.nodes('master') : [client];
  const policies = await Promise.all(
    primaries.map(async (node) => {
      const info = await node.info('memory');
      const limited = Number(/^maxmemory:(\d+)/m.exec(info)?.[1] ?? '0') > 0;
      return limited ? (/^maxmemory_policy:(\S+)/m.exec(info)?.[1] ?? 'unknown') : 'noeviction';
    }),
  );
  return policies;
}

/** Throws unless every primary keeps its keys when full (`allowEviction` skips the check). */
export async function assertNoEviction(client: RedisClient, allowEviction: boolean): Promise<void> {
  if (allowEviction) return;
  // A server whose INFO does not say (a Redis-compatible one) is given the benefit of the doubt.
  const evicting = (await evictionPolicies(client)).filter((policy) => policy !== 'noeviction' && policy !== 'unknown');
  if (evicting.length === 0) return;
  throw new Error(
    `Redis may evict keys (maxmemory-policy ${[...new Set(evicting)].join(', ')} with a maxmemory limit): dedup keys, audit records and queued jobs could vanish when it is full. ` +
      'Set maxmemory-policy noeviction (docs/deploy.md), or state.allow_eviction: true to run anyway',
  );
}
