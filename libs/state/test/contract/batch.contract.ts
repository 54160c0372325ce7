import { describe, expect, it } from 'vitest';
import type { BulkWriteOp } from '../../src/state-store.js';
import { key, type ContractContext } from './harness.js';

/** getMany and writeBatch, including the TTL rules of WriteOp. */
export function batchContract(ctx: ContractContext): void {
  describe('getMany', () => {
    it('answers in key order, with null where absent', async () => {
      await ctx.store.set(key('many', 'a'), 'A');
      await ctx.store.set(key('many', 'b', 'ns', 't2'), 'B');
      const keys = [key('many', 'b', 'ns', 't2'), key('many', 'absent'), key('many', 'a'), key('many', 'b', 'ns', 't2')];
      expect(await ctx.store.getMany(keys)).toEqual(['B', null, 'A', 'B']);
      expect(await ctx.store.getMany([])).toEqual([]);
      expect(await ctx.store.getMany([key('many', 'absent')])).toEqual([null]);
    });

    it('reads counters as decimal strings, and null once a value expired', async () => {
      await ctx.store.writeBatch([
        { op: 'increment', key: key('many', 'n'), by: 42 },
        { op: 'increment', key: key('many', 'neg'), by: -7 },
      ]);
      await ctx.store.set(key('many', 'ttl'), 'v', { ttlMs: ctx.unit });
      const keys = [key('many', 'n'), key('many', 'neg'), key('many', 'ttl')];
      expect(await ctx.store.getMany(keys)).toEqual(['42', '-7', 'v']);
      await ctx.h.advance(2 * ctx.unit);
      expect(await ctx.store.getMany(keys)).toEqual(['42', '-7', null]);
    });
  });

  describe('writeBatch', () => {
    it('applies the writes in order', async () => {
      const idx = key('batch', 'idx');
      await ctx.store.writeBatch([
        { op: 'set', key: key('batch', 'v'), value: 'first' },
        { op: 'increment', key: key('batch', 'n'), by: 2 },
        { op: 'set', key: key('batch', 'v'), value: 'second' },
        { op: 'increment', key: key('batch', 'n'), by: 3 },
        { op: 'indexAdd', index: idx, member: 'a', score: 1 },
        { op: 'indexAdd', index: idx, member: 'b', score: 2 },
        { op: 'indexAdd', index: idx, member: 'a', score: 3 },
      ]);
      expect(await ctx.store.getMany([key('batch', 'v'), key('batch', 'n')])).toEqual(['second', '5']);
      expect(await ctx.store.indexRange(idx, { limit: 10 })).toEqual([
        { member: 'b', score: 2 },
        { member: 'a', score: 3 },
      ]);
    });

    it('creates counters at 0, readable with get(), and adds to them across batches', async () => {
      const n = key('batch', 'counter');
      await ctx.store.writeBatch([{ op: 'increment', key: n, by: 0 }]);
      expect(await ctx.store.get(n)).toBe('0');
      await ctx.store.writeBatch([{ op: 'increment', key: n, by: 10 }]);
      await ctx.store.writeBatch([{ op: 'increment', key: n, by: -4 }]);
      expect(await ctx.store.get(n)).toBe('6');
      expect(await ctx.store.delete(n)).toBe(true);
      expect(await ctx.store.get(n)).toBeNull();
    });

    it('indexRemove removes a member (absent ones are no-ops) and an emptied index is gone', async () => {
      const idx = key('batch', 'removals');
      await ctx.store.writeBatch([
        { op: 'indexAdd', index: idx, member: 'a', score: 1 },
        { op: 'indexAdd', index: idx, member: 'b', score: 2 },
      ]);
      await ctx.store.writeBatch([
        { op: 'indexRemove', index: idx, member: 'a' },
        { op: 'indexRemove', index: idx, member: 'never-added' },
        { op: 'indexRemove', index: key('batch', 'no-such-index'), member: 'x' },
      ]);
      expect((await ctx.store.indexRange(idx, { limit: 10 })).map((e) => e.member)).toEqual(['b']);
      await ctx.store.writeBatch([{ op: 'indexRemove', index: idx, member: 'b' }]);
      expect(await ctx.store.indexCount(idx)).toBe(0);
      await expect(
        ctx.store.compareAndSwapWith(key('batch', 'cas'), 0, 'v', [{ op: 'indexRemove', index: key('batch', 'cas-idx'), member: 'a' }]),
      ).rejects.toThrow(/indexRemove is a writeBatch op/);
    });

    it('delete removes a key of any family (an absent one is a no-op), and only in writeBatch', async () => {
      const value = key('batch', 'doomed-value');
      const idx = key('batch', 'doomed-index');
      const kept = key('batch', 'kept');
      await ctx.store.writeBatch([
        { op: 'set', key: value, value: 'v' },
        { op: 'indexAdd', index: idx, member: 'a', score: 1 },
        { op: 'set', key: kept, value: 'k' },
      ]);
      await ctx.store.writeBatch([
        { op: 'delete', key: value },
        { op: 'delete', key: idx },
        { op: 'delete', key: key('batch', 'never-written') },
      ]);
      expect(await ctx.store.getMany([value, kept])).toEqual([null, 'k']);
      expect(await ctx.store.indexCount(idx)).toBe(0);
      await expect(ctx.store.compareAndSwapWith(key('batch', 'cas'), 0, 'v', [{ op: 'delete', key: kept }])).rejects.toThrow(/delete is a writeBatch op/);
      expect(await ctx.store.get(kept)).toBe('k');
    });

    it('resolves at once for an empty batch', async () => {
      await expect(ctx.store.writeBatch([])).resolves.toBeUndefined();
    });

    it('set replaces the expiry, like set()', async () => {
      const shortened = key('batch', 'set-short');
      const cleared = key('batch', 'set-clear');
      await ctx.store.set(shortened, 'old', { ttlMs: 10 * ctx.unit });
      await ctx.store.set(cleared, 'old', { ttlMs: ctx.unit });
      await ctx.store.writeBatch([
        { op: 'set', key: shortened, value: 'new', ttlMs: ctx.unit },
        { op: 'set', key: cleared, value: 'new' },
      ]);
      await ctx.h.advance(2 * ctx.unit);
      expect(await ctx.store.getMany([shortened, cleared])).toEqual([null, 'new']);
    });

    it('a counter keeps the expiry it was created with', async () => {
      const n = key('batch', 'ttl-counter');
      await ctx.store.writeBatch([{ op: 'increment', key: n, by: 1, ttlMs: 2 * ctx.unit }]);
      await ctx.h.advance(ctx.unit);
      // Neither a longer TTL nor none at all moves the expiry.
      await ctx.store.writeBatch([{ op: 'increment', key: n, by: 1, ttlMs: 10 * ctx.unit }]);
      await ctx.store.writeBatch([{ op: 'increment', key: n, by: 1 }]);
      expect(await ctx.store.get(n)).toBe('3');
      await ctx.h.advance(1.5 * ctx.unit);
      expect(await ctx.store.get(n)).toBeNull();
      // Expired: the next increment starts a new counter with a new expiry.
      await ctx.store.writeBatch([{ op: 'increment', key: n, by: 1, ttlMs: 2 * ctx.unit }]);
      expect(await ctx.store.get(n)).toBe('1');
    });

    it('a shorter TTL does not shorten a counter, and a counter without expiry gets one', async () => {
      const long = key('batch', 'ttl-long');
      const persistent = key('batch', 'ttl-none');
      await ctx.store.writeBatch([
        { op: 'increment', key: long, by: 1, ttlMs: 4 * ctx.unit },
        { op: 'increment', key: persistent, by: 1 },
      ]);
      await ctx.store.writeBatch([
        { op: 'increment', key: long, by: 1, ttlMs: ctx.unit },
        { op: 'increment', key: persistent, by: 1, ttlMs: ctx.unit },
      ]);
      await ctx.h.advance(2 * ctx.unit);
      expect(await ctx.store.getMany([long, persistent])).toEqual(['2', null]);
    });

    it('an index keeps the expiry it was created with, then disappears', async () => {
      const idx = key('batch', 'ttl-index');
      await ctx.store.writeBatch([{ op: 'indexAdd', index: idx, member: 'a', score: 1, ttlMs: 2 * ctx.unit }]);
      await ctx.h.advance(ctx.unit);
      await ctx.store.writeBatch([{ op: 'indexAdd', index: idx, member: 'b', score: 2, ttlMs: 10 * ctx.unit }]);
      await ctx.store.indexAdd(idx, 'c', 3);
      expect(await ctx.store.indexCount(idx)).toBe(3);
      await ctx.h.advance(1.5 * ctx.unit);
      expect(await ctx.store.indexCount(idx)).toBe(0);
      expect(await ctx.store.indexRange(idx, { limit: 10 })).toEqual([]);
      expect(await ctx.store.delete(idx)).toBe(false);
    });

    it('an index created by indexAdd() gets the first expiry a batch gives it', async () => {
      const idx = key('batch', 'ttl-late');
      await ctx.store.indexAdd(idx, 'a', 1);
      await ctx.store.writeBatch([{ op: 'indexAdd', index: idx, member: 'b', score: 2, ttlMs: ctx.unit }]);
      await ctx.h.advance(2 * ctx.unit);
      expect(await ctx.store.indexCount(idx)).toBe(0);
    });

    it('rejects bad arguments with nothing written', async () => {
      const v = key('batch', 'untouched');
      const bad = [
        { op: 'increment', key: key('batch', 'n'), by: 1, ttlMs: 0 },
        { op: 'increment', key: key('batch', 'n'), by: 1.5 },
        { op: 'indexAdd', index: key('batch', 'i'), member: 'm', score: NaN },
        { op: 'set', key: v, value: 'x', ttlMs: -1 },
      ] as const;
      for (const op of bad) {
        await expect(ctx.store.writeBatch([{ op: 'set', key: v, value: 'x' }, op])).rejects.toThrow(RangeError);
      }
      expect(await ctx.store.get(v)).toBeNull();
    });

    it('rejects when a write fails, still applying the others (a pipeline, not a transaction)', async () => {
      const text = key('batch', 'text');
      await ctx.store.set(text, 'not a number');
      await expect(
        ctx.store.writeBatch([
          { op: 'set', key: key('batch', 'before'), value: 'x' },
          { op: 'increment', key: text, by: 1 },
          { op: 'set', key: key('batch', 'after'), value: 'y' },
        ]),
      ).rejects.toThrow(/not an integer/);
      expect(await ctx.store.getMany([key('batch', 'before'), text, key('batch', 'after')])).toEqual(['x', 'not a number', 'y']);
      await expect(ctx.store.writeBatch([{ op: 'indexAdd', index: text, member: 'm', score: 1 }])).rejects.toThrow(/WRONGTYPE/);
    });
  });

  describe('bulk writes acknowledged with their messages (logGroupAckWith)', () => {
    const GROUP = 'indexer';
    /** A log with `n` messages appended by writeBatch, read by `consumer`. */
    async function delivered(name: string, n: number, consumer = 'c1') {
      const log = key('ack-with', name);
      await ctx.store.logGroupCreate(log, GROUP, 'start');
      for (let i = 0; i < n; i++)
        await ctx.store.writeBatch([{ op: 'set', key: key('ack-with', `${name}-v${i}`), value: 'x' }], { append: { log, message: `m${i}` } });
      return { log, ids: (await ctx.store.logGroupRead(log, GROUP, consumer, 100)).map((m) => m.id) };
    }

    it('writeBatch appends its message after the writes, untrimmed', async () => {
      const { log, ids } = await delivered('append', 3);
      expect(ids).toHaveLength(3);
      expect((await ctx.store.logRange(log, { limit: 10 })).map((e) => e.message)).toEqual(['m0', 'm1', 'm2']);
      expect(await ctx.store.get(key('ack-with', 'append-v2'))).toBe('x');
      expect(await ctx.store.logLastId(log)).toBe(ids[2]);
    });

    it('applies the writes, grouped by key as one by one, and acknowledges and deletes the messages', async () => {
      const { log, ids } = await delivered('apply', 2);
      const n = key('ack-with', 'n');
      const zero = key('ack-with', 'zero');
      const idx = key('ack-with', 'idx');
      await ctx.store.indexAdd(idx, 'settled', 0);
      const result = await ctx.store.logGroupAckWith(log, GROUP, 'c1', ids, [
        { op: 'increment', key: n, by: 2 },
        { op: 'indexAdd', index: idx, member: 'a', score: 1 },
        { op: 'indexAdd', index: idx, member: 'b', score: 2 },
        { op: 'increment', key: n, by: 3 },
        { op: 'increment', key: n, by: -1 },
        { op: 'indexAdd', index: idx, member: 'a', score: 3 },
        { op: 'increment', key: zero, by: 0 },
        { op: 'indexRemove', index: idx, member: 'settled' },
      ]);
      expect(result).toEqual({ applied: true, failed: 0 });
      expect(await ctx.store.getMany([n, zero])).toEqual(['4', '0']);
      expect(await ctx.store.indexRange(idx, { limit: 10 })).toEqual([
        { member: 'b', score: 2 },
        { member: 'a', score: 3 },
      ]);
      expect(await ctx.store.logGroupLag(log, GROUP)).toEqual({ pending: 0, undelivered: 0 });
      expect(await ctx.store.logLength(log)).toBe(0);
      expect(await ctx.store.logLastId(log)).toBeNull();
    });

    it('writes nothing when a message is no longer pending for the consumer (acknowledged, or claimed by another)', async () => {
      const { log, ids } = await delivered('stale', 2);
      const n = key('ack-with', 'stale-n');
      const [first = '', second = ''] = ids;
      // Another consumer took the second message over (its first consumer looked dead).
      expect((await ctx.store.logGroupClaim(log, GROUP, 'c2', 0, 10)).map((m) => m.id)).toEqual([first, second]);
      expect(await ctx.store.logGroupAckWith(log, GROUP, 'c1', [first, second], [{ op: 'increment', key: n, by: 1 }])).toEqual({ applied: false, failed: 0 });
      expect(await ctx.store.logGroupAckWith(log, GROUP, 'c2', [first, second], [{ op: 'increment', key: n, by: 1 }])).toEqual({ applied: true, failed: 0 });
      expect(await ctx.store.logGroupAckWith(log, GROUP, 'c2', [first], [{ op: 'increment', key: n, by: 1 }])).toEqual({ applied: false, failed: 0 });
      expect(await ctx.store.get(n)).toBe('1');
    });

    it('checks each message exactly, however many others the consumer holds', async () => {
      const log = key('ack-with', 'many');
      await ctx.store.logGroupCreate(log, GROUP, 'start');
      for (let i = 0; i < 1105; i++) await ctx.store.writeBatch([], { append: { log, message: `m${i}` } });
      const older = await ctx.store.logGroupRead(log, GROUP, 'c1', 1100);
      const newer = await ctx.store.logGroupRead(log, GROUP, 'c1', 5);
      expect(older).toHaveLength(1100);
      const n = key('ack-with', 'many-n');
      const result = await ctx.store.logGroupAckWith(
        log,
        GROUP,
        'c1',
        newer.map((m) => m.id),
        [{ op: 'increment', key: n, by: 5 }],
      );
      expect(result).toEqual({ applied: true, failed: 0 });
      expect(await ctx.store.logGroupLag(log, GROUP)).toEqual({ pending: 1100, undelivered: 0 });
      // Two ids far apart, with 1,098 others of the consumer's between them.
      const apart = [older[0]?.id ?? '', older[1099]?.id ?? ''];
      expect(await ctx.store.logGroupAckWith(log, GROUP, 'c1', apart, [{ op: 'increment', key: n, by: 2 }])).toEqual({ applied: true, failed: 0 });
      expect(await ctx.store.logGroupAckWith(log, GROUP, 'c2', [older[1]?.id ?? ''], [])).toEqual({ applied: false, failed: 0 });
      expect(await ctx.store.get(n)).toBe('7');
      expect(await ctx.store.logGroupLag(log, GROUP)).toEqual({ pending: 1098, undelivered: 0 });
    });

    it('forgets a consumer only while it holds no pending message', async () => {
      const { log, ids } = await delivered('consumers', 2);
      expect(await ctx.store.logGroupRemoveConsumer(log, GROUP, 'c1')).toBe(false);
      expect(await ctx.store.logGroupLag(log, GROUP)).toEqual({ pending: 2, undelivered: 0 });
      await ctx.store.logGroupAckWith(log, GROUP, 'c1', ids, []);
      expect(await ctx.store.logGroupRemoveConsumer(log, GROUP, 'c1')).toBe(true);
      expect(await ctx.store.logGroupRemoveConsumer(log, GROUP, 'never-read')).toBe(true);
    });

    it('forgetting idle consumers never takes one holding a message', async () => {
      const { log, ids } = await delivered('idle', 2);
      expect(await ctx.store.logGroupForgetIdle(log, GROUP, 0)).toBe(0);
      expect(await ctx.store.logGroupLag(log, GROUP)).toEqual({ pending: 2, undelivered: 0 });
      expect(await ctx.store.logGroupAckWith(log, GROUP, 'c1', ids, [])).toEqual({ applied: true, failed: 0 });
      await expect(ctx.store.logGroupForgetIdle(key('ack-with', 'no-log'), GROUP, 0)).rejects.toThrow(); // no such log or group
    });

    it('gives a key the first TTL of its writes, and never moves an expiry it already has', async () => {
      const { log, ids } = await delivered('ttl', 1);
      const fresh = key('ack-with', 'ttl-fresh');
      const kept = key('ack-with', 'ttl-kept');
      const idx = key('ack-with', 'ttl-index');
      await ctx.store.writeBatch([{ op: 'increment', key: kept, by: 1, ttlMs: 2 * ctx.unit }]);
      await ctx.store.logGroupAckWith(log, GROUP, 'c1', ids, [
        { op: 'increment', key: fresh, by: 1, ttlMs: 2 * ctx.unit },
        { op: 'increment', key: fresh, by: 1, ttlMs: 10 * ctx.unit },
        { op: 'increment', key: kept, by: 1, ttlMs: 10 * ctx.unit },
        { op: 'indexAdd', index: idx, member: 'a', score: 1, ttlMs: 2 * ctx.unit },
      ]);
      expect(await ctx.store.getMany([fresh, kept])).toEqual(['2', '2']);
      await ctx.h.advance(3 * ctx.unit);
      expect(await ctx.store.getMany([fresh, kept])).toEqual([null, null]);
      expect(await ctx.store.indexCount(idx)).toBe(0);
    });

    it('counts a write to a key of the wrong type as failed and applies the others', async () => {
      const { log, ids } = await delivered('wrongtype', 1);
      const text = key('ack-with', 'text');
      await ctx.store.set(text, 'not a number');
      const n = key('ack-with', 'wt-n');
      const result = await ctx.store.logGroupAckWith(log, GROUP, 'c1', ids, [
        { op: 'increment', key: text, by: 1 },
        { op: 'increment', key: n, by: 1 },
      ]);
      expect(result).toEqual({ applied: true, failed: 1 });
      expect(await ctx.store.get(n)).toBe('1');
    });

    it('rejects a write that is not a bulk write, or a bad argument, with nothing written', async () => {
      const { log, ids } = await delivered('bad', 1);
      const bad = [
        { op: 'set', key: key('ack-with', 's'), value: 'x' },
        { op: 'increment', key: key('ack-with', 'bad-n'), by: 1.5 },
        { op: 'indexAdd', index: key('ack-with', 'i'), member: 'm', score: NaN },
      ];
      for (const op of bad) {
        const writes = [op] as unknown as BulkWriteOp[];
        await expect(ctx.store.logGroupAckWith(log, GROUP, 'c1', ids, writes)).rejects.toThrow(RangeError);
      }
      expect(await ctx.store.getMany([key('ack-with', 's'), key('ack-with', 'bad-n')])).toEqual([null, null]);
      expect(await ctx.store.logGroupLag(log, GROUP)).toEqual({ pending: 1, undelivered: 0 });
    });
  });
}
