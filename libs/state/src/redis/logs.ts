import type { Redis } from 'ioredis';
import type { LogEntry } from '../state-store.js';
import { logMaxLen } from '../store-args.js';

/* Logs on Redis Streams: one field, `m`, holds the message. */

export async function logAppend(client: Redis, key: string, message: string, maxLen: number): Promise<string> {
  logMaxLen(maxLen);
  // `~` trims in whole radix-tree nodes: cheap, and the log keeps at least maxLen entries.
  const id = await client.xadd(key, 'MAXLEN', '~', maxLen, '*', 'm', message);
  if (id === null) throw new Error('XADD returned no id');
  return id;
}

export async function logRange(client: Redis, key: string, opts: { afterId?: string; limit: number }): Promise<LogEntry[]> {
  const start = opts.afterId === undefined ? '-' : `(${opts.afterId}`;
  const entries = await client.xrange(key, start, '+', 'COUNT', opts.limit);
  return entries.map(([id, fields]) => ({ id, message: fields[fields.indexOf('m') + 1] ?? '' }));
}
