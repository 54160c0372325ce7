import { isCluster, type RedisClient } from './connection.js';
import { ttlOf } from '../store-args.js';
import type { SetOptions } from '../state-store.js';
import { deleteIfValueScript } from './lua/index.js';
import { runScript } from './scripts.js';
import { mgetBySlot } from './slots.js';

/*
 * Plain values: single commands, atomic without a script. Both SET forms clear an earlier TTL
 * when none is given, which is what "absent: no expiry" means.
 */

/** SET <key> <value> [PX ttl] [NX] */
export function setArgs(key: string, value: string, opts: SetOptions | undefined, onlyIfAbsent: boolean): (string | number)[] {
  const args: (string | number)[] = [key, value];
  const ttl = ttlOf(opts);
  if (ttl !== undefined) args.push('PX', ttl);
  if (onlyIfAbsent) args.push('NX');
  return args;
}

export function getValue(client: RedisClient, key: string): Promise<string | null> {
  return client.get(key);
}

/** MGET (one per slot on Redis Cluster): null for absent keys and for keys of another family; no round trip for no keys. */
export async function getValues(client: RedisClient, keys: readonly string[]): Promise<(string | null)[]> {
  if (keys.length === 0) return [];
  return isCluster(client) ? mgetBySlot((some) => client.mget(...some), keys) : client.mget(...keys);
}

export async function setValue(client: RedisClient, key: string, value: string, opts?: SetOptions): Promise<void> {
  await client.call('SET', ...setArgs(key, value, opts, false));
}

/** True when this call wrote the key (SET NX answers OK) rather than finding it present (nil). */
export async function setValueIfAbsent(client: RedisClient, key: string, value: string, opts?: SetOptions): Promise<boolean> {
  return (await client.call('SET', ...setArgs(key, value, opts, true))) === 'OK';
}

export async function deleteIfValue(client: RedisClient, key: string, value: string): Promise<boolean> {
  return (await runScript(client, deleteIfValueScript, { keys: [key], args: [value] })) === 1;
}

/** DEL works for every key family (string, hash, sorted set). */
export async function deleteKey(client: RedisClient, key: string): Promise<boolean> {
  return (await client.del(key)) > 0;
}
