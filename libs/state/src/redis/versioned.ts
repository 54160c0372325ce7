import type { RedisClient } from './connection.js';
import { ttlOf } from '../store-args.js';
import type { CasResult, SetOptions, Versioned } from '../state-store.js';
import { compareAndSwapScript } from './lua/index.js';
import { numbers, runScript, type ScriptCall } from './scripts.js';

/* Versioned values: a hash {v: version, d: data}; every write goes through the CAS script. */

export async function getVersioned(client: RedisClient, key: string): Promise<Versioned | null> {
  const [data, version] = await client.hmget(key, 'd', 'v');
  if (data == null || version == null) return null;
  return { value: data, version: Number(version) };
}

export function compareAndSwapArgs(key: string, expectedVersion: number, value: string, opts?: SetOptions): ScriptCall {
  const ttl = ttlOf(opts);
  return { keys: [key], args: [expectedVersion, value, ttl === undefined ? '' : ttl] };
}

export async function compareAndSwap(client: RedisClient, key: string, expectedVersion: number, value: string, opts?: SetOptions): Promise<CasResult> {
  const reply = await runScript(client, compareAndSwapScript, compareAndSwapArgs(key, expectedVersion, value, opts));
  const [ok = 0, version = 0] = numbers(reply, 2, 'compareAndSwap');
  return { ok: ok === 1, version };
}
