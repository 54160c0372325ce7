import type { RedisClient } from './connection.js';
import type { LogDelivery, LogEntry } from '../state-store.js';
import { logMaxLen } from '../store-args.js';
import { logGroupLagScript } from './lua/index.js';
import { numbers, runScript } from './scripts.js';

/* Logs on Redis Streams: one field, `m`, holds the message. */

export async function logAppend(client: RedisClient, key: string, message: string, maxLen: number): Promise<string> {
  logMaxLen(maxLen);
  // `~` trims in whole radix-tree nodes: cheap, and the log keeps at least maxLen entries.
  const id = await client.xadd(key, 'MAXLEN', '~', maxLen, '*', 'm', message);
  if (id === null) throw new Error('XADD returned no id');
  return id;
}

export async function logRange(client: RedisClient, key: string, opts: { afterId?: string; limit: number }): Promise<LogEntry[]> {
  const start = opts.afterId === undefined ? '-' : `(${opts.afterId}`;
  const entries = await client.xrange(key, start, '+', 'COUNT', opts.limit);
  return entries.map(([id, fields]) => ({ id, message: fields[fields.indexOf('m') + 1] ?? '' }));
}

type RawEntry = [id: string, fields: string[] | null];

function deliveries(entries: readonly RawEntry[], count: (id: string) => number): LogDelivery[] {
  // An entry trimmed by MAXLEN while pending comes back without fields: nothing to deliver.
  return entries.filter(([, fields]) => fields !== null).map(([id, fields]) => ({ id, message: fieldOf(fields as string[]), deliveries: count(id) }));
}

function fieldOf(fields: string[]): string {
  return fields[fields.indexOf('m') + 1] ?? '';
}

export async function groupCreate(client: RedisClient, key: string, group: string, from: 'start' | 'end'): Promise<boolean> {
  try {
    await client.xgroup('CREATE', key, group, from === 'start' ? '0' : '$', 'MKSTREAM');
    return true;
  } catch (err) {
    if (err instanceof Error && err.message.startsWith('BUSYGROUP')) return false;
    throw err;
  }
}

export async function groupRead(client: RedisClient, key: string, group: string, consumer: string, count: number): Promise<LogDelivery[]> {
  const reply = (await client.xreadgroup('GROUP', group, consumer, 'COUNT', count, 'STREAMS', key, '>')) as [string, RawEntry[]][] | null;
  return deliveries(reply?.[0]?.[1] ?? [], () => 1);
}

export async function groupClaim(client: RedisClient, key: string, group: string, consumer: string, minIdleMs: number, count: number): Promise<LogDelivery[]> {
  const [, claimed] = (await client.xautoclaim(key, group, consumer, minIdleMs, '0-0', 'COUNT', count)) as [string, RawEntry[], string[]?];
  if (claimed.length === 0) return [];
  // XAUTOCLAIM does not say how often each was delivered; XPENDING of exactly each id does (one pipeline).
  const pipeline = client.pipeline();
  for (const [id] of claimed) pipeline.xpending(key, group, id, id, 1);
  const replies = (await pipeline.exec()) ?? [];
  const counts = new Map<string, number>();
  for (const [err, reply] of replies) {
    const [entry] = (err ? [] : reply) as [string, string, number, number][];
    if (entry) counts.set(entry[0], entry[3]);
  }
  return deliveries(claimed, (id) => counts.get(id) ?? 1);
}

/** Pending entries XPENDING lists per call, and calls at most, while looking past the asker's own. */
const PENDING_PAGE = 100;
const PENDING_PAGES_MAX = 10;

type PendingRow = [id: string, consumer: string, idleMs: number, deliveries: number];

/**
 * XAUTOCLAIM without the asker's own pending messages: XPENDING lists the idle ones with their
 * owners, XCLAIM takes the others'. XCLAIM checks the idle time again, so of consumers racing for
 * a message one gets it; and, like XAUTOCLAIM, it drops from the group an entry trimmed away.
 */
export async function groupClaimFromOthers(
  client: RedisClient,
  key: string,
  group: string,
  consumer: string,
  minIdleMs: number,
  count: number,
): Promise<LogDelivery[]> {
  const counts = new Map<string, number>();
  let start = '-';
  for (let page = 0; page < PENDING_PAGES_MAX && counts.size < count; page++) {
    const rows = (await client.xpending(key, group, 'IDLE', minIdleMs, start, '+', PENDING_PAGE)) as PendingRow[];
    for (const [id, owner, , delivered] of rows) if (owner !== consumer && counts.size < count) counts.set(id, delivered + 1);
    const last = rows.at(-1);
    if (rows.length < PENDING_PAGE || last === undefined) break;
    start = `(${last[0]}`;
  }
  if (counts.size === 0) return [];
  const claimed = (await client.call('XCLAIM', key, group, consumer, minIdleMs, ...counts.keys())) as RawEntry[];
  return deliveries(claimed, (id) => counts.get(id) ?? 1);
}

export async function groupAck(client: RedisClient, key: string, group: string, ids: readonly string[]): Promise<number> {
  return ids.length === 0 ? 0 : client.xack(key, group, ...ids);
}

/**
 * Entries counted from either end of a stream, at most, to tell a group's undelivered messages:
 * the walk holds them (bodies included) in the script, which blocks Redis while it runs.
 */
const LAG_COUNT_MAX = 100;

export async function groupLag(client: RedisClient, key: string, group: string): Promise<{ pending: number; undelivered: number }> {
  const [pending = 0, undelivered = 0] = numbers(await runScript(client, logGroupLagScript, { keys: [key], args: [group, LAG_COUNT_MAX] }), 2, 'logGroupLag');
  return { pending, undelivered };
}
