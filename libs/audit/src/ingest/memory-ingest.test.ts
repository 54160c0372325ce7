import { MemoryStateStore } from '@sluice/state';
import { describe, expect, it } from 'vitest';
import { draft } from '../../test/support/records.js';
import { recordKey } from '../keys.js';
import { StateAuditStore } from '../state-audit-store.js';
import type { RecordSink, StoredRecord } from './ingest.js';
import { MemoryAuditIngest } from './memory-ingest.js';

/** A sink that keeps what it is given, batch by batch; `away` makes it reject, `gate` holds each batch until opened. */
function recordingSink() {
  const batches: StoredRecord[][] = [];
  let away = false;
  let gate: Promise<void> | null = null;
  const sink: RecordSink = {
    async store(records) {
      if (gate) await gate;
      if (away) throw new Error('sink away');
      batches.push([...records]);
      return new Set();
    },
  };
  return {
    sink,
    batches,
    setAway: (value: boolean) => {
      away = value;
    },
    hold: () => {
      let open = () => {};
      gate = new Promise((r) => {
        open = r;
      });
      return () => {
        gate = null;
        open();
      };
    },
  };
}

/** Records as the audit store makes them (ids, expiry), appended through a real store on the memory backend. */
async function entries(n: number) {
  const maker = new StateAuditStore(new MemoryStateStore());
  const out = [];
  for (let i = 0; i < n; i++) out.push(await maker.append(draft({ action_id: `a-${i}` }), { ttlMs: null, chain: false }));
  await maker.close();
  return out.map((record) => ({ record, scopeCode: 'S', valueWritten: false, intent: undefined }));
}

describe('the one-process ingest with a sink', () => {
  it('hands the sink batches of at most maxPending records, in order, and nothing to the state', async () => {
    const state = new MemoryStateStore();
    const rec = recordingSink();
    const ingest = new MemoryAuditIngest(state, { observers: [], sink: rec.sink, maxPending: 100, flushDelayMs: 10_000 });
    const all = await entries(250);
    const release = rec.hold();
    for (const e of all) await ingest.append(e);
    release();
    expect(await ingest.catchUp()).toBe(true);
    expect(rec.batches.every((b) => b.length <= 100)).toBe(true);
    expect(rec.batches.flat().map((r) => r.id)).toEqual(all.map((e) => e.record.id));
    // The records themselves: nothing is encoded on the way in one process.
    expect(rec.batches[0]?.[0]).toEqual({ id: all[0]?.record.id, record: all[0]?.record });
    expect((await state.scan('audit')).entries).toEqual([]);
    await ingest.close();
  });

  it('keeps what the sink refused queued and findable, and stores it once the sink is back', async () => {
    const rec = recordingSink();
    const ingest = new MemoryAuditIngest(new MemoryStateStore(), { observers: [], sink: rec.sink, flushDelayMs: 10_000 });
    const all = await entries(5);
    rec.setAway(true);
    for (const e of all) await ingest.append(e);
    expect(await ingest.catchUp()).toBe(false);
    expect(ingest.queued('a-3').map((r) => r.id)).toEqual([all[3]?.record.id]);
    rec.setAway(false);
    expect(await ingest.catchUp()).toBe(true);
    expect(rec.batches.flat().map((r) => r.id)).toEqual(all.map((e) => e.record.id));
    expect(ingest.queued('a-3')).toEqual([]);
    await ingest.close();
  });

  it('makes appends wait once more than maxQueued records wait for a slow sink', async () => {
    const rec = recordingSink();
    const ingest = new MemoryAuditIngest(new MemoryStateStore(), { observers: [], sink: rec.sink, maxPending: 10, maxQueued: 20, flushDelayMs: 10_000 });
    const all = await entries(30);
    const release = rec.hold();
    // 20 queued (two batches started and held), then the 21st waits for the flush.
    for (const e of all.slice(0, 20)) await ingest.append(e);
    let settled = false;
    const waiting = ingest.append(all[20] as (typeof all)[number]).then(() => {
      settled = true;
    });
    await new Promise((r) => setTimeout(r, 50));
    expect(settled).toBe(false);
    release();
    await waiting;
    expect(settled).toBe(true);
    await ingest.close();
    expect(rec.batches.flat()).toHaveLength(21);
  });
});

describe('the one-process ingest without a sink', () => {
  it('indexes at once when flushAt records are queued, in batches of about that size, without waiting for the timer', async () => {
    const batches: number[] = [];
    const ingest = new MemoryAuditIngest(new MemoryStateStore(), {
      observers: [],
      flushAt: 4,
      flushDelayMs: 10_000,
      onIndexed: ({ indexed }) => batches.push(indexed),
    });
    const all = await entries(11);
    const tick = () => new Promise((r) => setTimeout(r, 5));
    for (const e of all.slice(0, 3)) await ingest.append(e);
    await tick();
    expect(batches).toEqual([]);
    await ingest.append(all[3] as (typeof all)[number]);
    await tick();
    expect(batches).toEqual([4]);
    // Seven in one go: the fourth of them starts a flush, which runs after all seven are queued.
    for (const e of all.slice(4)) await ingest.append(e);
    await tick();
    expect(batches).toEqual([4, 7]);
    await ingest.close();
  });

  it('stores a record whose indexing throws, without any of its index entries, and indexes the rest of its batch', async () => {
    const state = new MemoryStateStore();
    const [good, bad] = await entries(2);
    const errors: unknown[] = [];
    // Throws for the second record after its own index entries were built: none of them may be written.
    const observer = {
      writesFor(record: { id: string }) {
        if (record.id === bad?.record.id) throw new Error('observer broke');
        return [];
      },
    };
    const ingest = new MemoryAuditIngest(state, { observers: [observer], onError: (err) => errors.push(err) });
    for (const e of [good, bad]) if (e) await ingest.append(e);
    await ingest.catchUp();
    expect(errors).toHaveLength(1);
    const trail = new StateAuditStore(state);
    // A tenant's indexes: their members name no scope code (these entries' 'S' is made up).
    const listed = (await trail.query({ namespace: 'ns', tenant: 't1', limit: 10, offset: 0 })).records.map((r) => r.action_id);
    expect(listed).toEqual(['a-0']);
    // Stored all the same (its value and action pointer are not index writes).
    if (bad) expect(await state.get(recordKey(bad.record, bad.record.id))).not.toBeNull();
    await trail.close();
    await ingest.close();
  });
});
