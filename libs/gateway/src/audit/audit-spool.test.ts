import { describe, expect, it } from 'vitest';
import { AuditSpool } from './audit-spool.js';

/** A spool over a write that fails until `up`, recording what it wrote. */
function spoolOver(maxEntries: number) {
  const written: string[] = [];
  let dropped = 0;
  const backend = { up: false, gate: null as Promise<void> | null };
  const spool = new AuditSpool<string>({
    maxEntries,
    retryMs: 60_000, // flushed by hand below
    write: async (entry) => {
      await backend.gate;
      if (!backend.up) throw new Error('down');
      written.push(entry);
    },
    onDropped: () => dropped++,
    onWritten: () => {},
  });
  return { spool, written, backend, dropped: () => dropped };
}

describe('the audit spool', () => {
  it('writes in order once the backend answers, keeping what failed', async () => {
    const { spool, written, backend } = spoolOver(10);
    for (const e of ['a', 'b', 'c']) spool.add(e);
    await spool.flush();
    expect(written).toEqual([]);
    expect(spool.size).toBe(3);
    backend.up = true;
    await spool.flush();
    expect(written).toEqual(['a', 'b', 'c']);
    expect(spool.size).toBe(0);
    await spool.close();
  });

  it('drops the oldest waiting entry when full, never the one being written', async () => {
    const { spool, written, backend, dropped } = spoolOver(2);
    spool.add('a');
    spool.add('b');
    backend.up = true;
    let open!: () => void;
    backend.gate = new Promise((r) => (open = r));
    const flushing = spool.flush(); // 'a' is taken off and being written; 'b' waits
    spool.add('c');
    spool.add('d'); // full: drops 'b', the oldest waiting
    open();
    await flushing;
    expect(written).toEqual(['a', 'c', 'd']);
    expect(dropped()).toBe(1);
    await spool.close();
  });
});
