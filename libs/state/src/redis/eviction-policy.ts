import { isCluster, type RedisClient } from './connection.js';

/**
 * The maxmemory-policy of every primary the client writes to. Any other policy than noeviction
 * lets Redis drop keys when full: a dedup key (the same action runs twice), an audit record of an
 * acknowledged dispatch, a queued job. Read from INFO, which the scheduler needs anyway (CONFIG
 * is often renamed or refused on managed Redis).
 */
async function evictionPolicies(client: RedisClient): Promise<string[]> {
  const primaries = isCluster(client) ? client.nodes('master') : [client];
  return Promise.all(primaries.map(async (node) => /^maxmemory_policy:(\S+)/m.exec(await node.info('memory'))?.[1] ?? 'unknown'));
}

/** Throws unless every primary keeps its keys when full (`allowEviction` skips the check). */
export async function assertNoEviction(client: RedisClient, allowEviction: boolean): Promise<void> {
  if (allowEviction) return;
  // A server whose INFO does not say (a Redis-compatible one) is given the benefit of the doubt.
  const evicting = (await evictionPolicies(client)).filter((policy) => policy !== 'noeviction' && policy !== 'unknown');
  if (evicting.length === 0) return;
  throw new Error(
    `Redis may evict keys (maxmemory-policy ${[...new Set(evicting)].join(', ')}): dedup keys, audit records and queued jobs could vanish when it is full. ` +
      'Set maxmemory-policy noeviction (docs/deploy.md), or state.allow_eviction: true to run anyway',
  );
}
