import { describe, expect, it } from 'vitest';
import type { ScanOptions, StateKey, StateStore } from '../../src/state-store.js';
import { key, type ContractContext } from './harness.js';

/** Follows the cursor to the end; returns every entry in page order, duplicates included. */
async function scanAll(store: StateStore, kind: string, opts: Omit<ScanOptions, 'cursor'> = {}) {
  const entries: { key: StateKey; value: string }[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 10_000; pages++) {
    const page = await store.scan(kind, cursor === undefined ? opts : { ...opts, cursor });
    entries.push(...page.entries);
    if (page.cursor === null) return entries;
    cursor = page.cursor;
  }
  throw new Error('scan did not finish');
}

const id = (k: StateKey) => JSON.stringify([k.kind, k.namespace, k.tenant, k.id]);

/**
 * Every key written, and nothing else, exactly once by key. Redis SCAN may return a key twice
 * if the keyspace is rehashed mid-scan (its documented guarantee is "at least once"), so a
 * repeat there must at least carry the same value; the memory backend never repeats.
 */
function expectExactly(store: StateStore, entries: { key: StateKey; value: string }[], expected: Map<string, string>): void {
  const seen = new Map<string, string>();
  for (const e of entries) {
    const prior = seen.get(id(e.key));
    if (prior !== undefined) {
      expect(store.backend, `duplicate ${id(e.key)}`).toBe('redis');
      expect(e.value).toBe(prior);
    }
    seen.set(id(e.key), e.value);
  }
  expect(new Map([...seen].sort())).toEqual(new Map([...expected].sort()));
}

export function scanContract(ctx: ContractContext): void {
  describe('scan', () => {
    it('pages through 250 values of a kind with no misses and no strangers', async () => {
      const expected = new Map<string, string>();
      const writes: Promise<void>[] = [];
      const scopes: [string, string, number][] = [
        ['ns1', 't1', 100],
        ['ns1', 't2', 75],
        ['ns2', 't1', 75],
      ];
      for (const [ns, tenant, n] of scopes) {
        for (let i = 0; i < n; i++) {
          const k = key('scan', `item-${i}`, ns, tenant);
          expected.set(id(k), `${ns}/${tenant}/${i}`);
          writes.push(ctx.store.set(k, `${ns}/${tenant}/${i}`));
        }
      }
      // Neighbours that must not show up: another kind, and a kind whose name extends this one.
      writes.push(ctx.store.set(key('scanx', 'item-0', 'ns1', 't1'), 'no'));
      writes.push(ctx.store.set(key('other', 'item-0', 'ns1', 't1'), 'no'));
      await Promise.all(writes);

      const pages: number[] = [];
      let cursor: string | undefined;
      const all: { key: StateKey; value: string }[] = [];
      do {
        const page = await ctx.store.scan('scan', cursor === undefined ? { count: 50 } : { count: 50, cursor });
        pages.push(page.entries.length);
        all.push(...page.entries);
        cursor = page.cursor ?? undefined;
      } while (cursor !== undefined);
      expect(pages.length).toBeGreaterThan(1);
      expectExactly(ctx.store, all, expected);

      const only = (ns?: string, tenant?: string) =>
        new Map(
          [...expected].filter(([k]) => {
            const [, kns, kt] = JSON.parse(k) as string[];
            return (ns === undefined || kns === ns) && (tenant === undefined || kt === tenant);
          }),
        );
      expectExactly(ctx.store, await scanAll(ctx.store, 'scan', { namespace: 'ns1', count: 50 }), only('ns1'));
      expectExactly(ctx.store, await scanAll(ctx.store, 'scan', { namespace: 'ns1', tenant: 't2', count: 50 }), only('ns1', 't2'));
      expectExactly(ctx.store, await scanAll(ctx.store, 'scan', { tenant: 't1', count: 50 }), only(undefined, 't1'));
      expectExactly(ctx.store, await scanAll(ctx.store, 'scan', { namespace: 'nope' }), new Map());
    });

    it('round-trips names containing separators and glob characters, and scopes them exactly', async () => {
      const odd = [
        key('odd:kind', 'id:with:colons', 'a:b', 'c'),
        key('odd:kind', '{braces}', 'a', 'b:c'),
        key('odd:kind', '%25 percent*?[x]', 'a*', '{t}'),
        key('odd:kind', '', 'a', 'b'),
      ];
      const expected = new Map<string, string>();
      for (const [i, k] of odd.entries()) {
        await ctx.store.set(k, `v${i}`);
        expected.set(id(k), `v${i}`);
        expect(await ctx.store.get(k)).toBe(`v${i}`);
      }
      expectExactly(ctx.store, await scanAll(ctx.store, 'odd:kind'), expected);
      // 'a' + 'b:c' and 'a:b' + 'c' render differently: neither scope sees the other.
      const scoped = await scanAll(ctx.store, 'odd:kind', { namespace: 'a:b', tenant: 'c' });
      expect(scoped.map((e) => e.key)).toEqual([odd[0]]);
      const star = await scanAll(ctx.store, 'odd:kind', { namespace: 'a*' });
      expect(star.map((e) => e.key)).toEqual([odd[2]]);
      expect(await scanAll(ctx.store, 'odd')).toEqual([]);
    });

    it('skips expired values and other key families', async () => {
      await ctx.store.set(key('mixed', 'live'), 'yes');
      await ctx.store.set(key('mixed', 'short'), 'gone', { ttlMs: ctx.unit });
      await ctx.store.compareAndSwap(key('mixed', 'versioned'), 0, 'hash');
      await ctx.store.indexAdd(key('mixed', 'index'), 'm', 1);
      await ctx.h.advance(2 * ctx.unit);
      const entries = await scanAll(ctx.store, 'mixed');
      expect(entries).toEqual([{ key: key('mixed', 'live'), value: 'yes' }]);
    });

    it('returns an empty final page for an unknown kind', async () => {
      expect(await scanAll(ctx.store, 'never-written')).toEqual([]);
    });
  });
}
