import type { StateKey, WriteOp } from '../state-store.js';
import { writeTtl } from '../write-ops.js';
import type { Entry, Keyspace } from './memory-keyspace.js';
import { SortedIndex } from './sorted-index.js';

/*
 * The WriteOps of writeBatch and compareAndSwapWith, each mirroring the Redis commands it
 * becomes there (SET [PX], INCRBY + PEXPIRE NX, ZADD + PEXPIRE NX).
 */

/** INCRBY's rule: the stored value must be an integer. */
export function integer(value: string): number {
  const n = Number(value);
  if (!/^-?\d+$/.test(value) || !Number.isSafeInteger(n)) throw new Error('ERR value is not an integer or out of range');
  return n;
}

/** INCRBY: a counter starts at 0 and keeps its TTL. Returns the live entry. */
function incrementBy(ks: Keyspace, rendered: string, key: StateKey, by: number): Entry {
  const entry = ks.typed(rendered, 'string');
  const count = (entry === undefined ? 0 : integer(entry.value)) + by;
  if (!Number.isSafeInteger(count)) throw new Error('ERR increment or decrement would overflow');
  // In place when it exists: rollup counters take several increments per dispatch.
  if (entry !== undefined) {
    ks.setValue(entry, String(count));
    return entry;
  }
  const created: Entry = { type: 'string', kind: key.kind, value: String(count), expiresAt: undefined };
  ks.put(rendered, created);
  return created;
}

/** ZADD: adds or moves the member; the index keeps its TTL. Returns the live entry. */
export function addToIndex(ks: Keyspace, rendered: string, key: StateKey, member: string, score: number, fixedScore = false): Entry {
  const entry = ks.typed(rendered, 'zset');
  if (entry !== undefined) {
    entry.members.add(member, score, fixedScore);
    return entry;
  }
  const members = new SortedIndex();
  members.add(member, score, fixedScore);
  const created: Entry = { type: 'zset', kind: key.kind, members, expiresAt: undefined };
  ks.put(rendered, created);
  return created;
}

/** A write as validateWrites left it (not copied: this runs for every write of every batch). */
export function applyWrite(ks: Keyspace, rendered: string, w: WriteOp): void {
  switch (w.op) {
    case 'set': {
      // SET [PX]: replaces (or clears) the TTL, like set().
      const ttl = writeTtl(w);
      ks.put(rendered, { type: 'string', kind: w.key.kind, value: w.value, expiresAt: ttl === undefined ? undefined : ks.now() + ttl });
      return;
    }
    case 'increment':
      expireIfPersistent(ks, incrementBy(ks, rendered, w.key, w.by), writeTtl(w));
      return;
    case 'indexAdd':
      expireIfPersistent(ks, addToIndex(ks, rendered, w.index, w.member, w.score, w.fixedScore === true), writeTtl(w));
      return;
    case 'indexRemove': {
      // ZREM: an index left empty is gone, as in Redis.
      const entry = ks.typed(rendered, 'zset');
      if (entry?.members.remove(w.member, w.score) && entry.members.size === 0) ks.delete(rendered);
      return;
    }
    case 'delete':
      ks.delete(rendered);
      return;
  }
}

/** Throws where applyWrite would fail on the key's current type or value, changing nothing (for all-or-nothing). */
export function checkApplicable(ks: Keyspace, rendered: string, w: WriteOp): void {
  if (w.op === 'increment') {
    const entry = ks.typed(rendered, 'string');
    if (entry !== undefined) integer(entry.value);
  } else if (w.op === 'indexAdd' || w.op === 'indexRemove') {
    ks.typed(rendered, 'zset');
  }
}

/** PEXPIRE NX: only a key without an expiry gets one, so repeated writes never move it. */
function expireIfPersistent(ks: Keyspace, entry: Entry, ttl: number | undefined): void {
  if (ttl !== undefined && entry.expiresAt === undefined) entry.expiresAt = ks.now() + ttl;
}
