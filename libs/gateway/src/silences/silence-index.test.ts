import type { StoredSilence } from '@sluice/core';
import { describe, expect, it } from 'vitest';
import { SilenceIndex } from './silence-index.js';

const T0 = Date.UTC(2026, 0, 1);

function silence(over: Partial<StoredSilence>): StoredSilence {
  return {
    id: 's1',
    namespace: 'payments',
    tenant: 'acme',
    matchers: [{ name: 'env', op: 'equal', value: 'prod' }],
    starts_at: new Date(T0).toISOString(),
    ends_at: new Date(T0 + 3_600_000).toISOString(),
    created_by: 'ops',
    comment: 'maintenance',
    created_at: new Date(T0).toISOString(),
    updated_at: new Date(T0).toISOString(),
    ...over,
  };
}

const prod = { env: 'prod' };

describe('silence index', () => {
  it('covers the tenant and its children, not siblings or parents', () => {
    const index = new SilenceIndex([silence({ tenant: 'acme.eu' })]);
    expect(index.match('payments', 'acme.eu', prod, T0)?.id).toBe('s1');
    expect(index.match('payments', 'acme.eu.west', prod, T0)?.id).toBe('s1');
    expect(index.match('payments', 'acme', prod, T0)).toBeUndefined();
    expect(index.match('payments', 'acme.us', prod, T0)).toBeUndefined();
    expect(index.match('payments', 'acme.eu-west', prod, T0)).toBeUndefined();
    expect(new SilenceIndex([silence({ tenant: 'acme' })]).match('payments', 'acme-eu', prod, T0)).toBeUndefined();
    expect(index.match('billing', 'acme.eu', prod, T0)).toBeUndefined();
  });

  it('applies over [starts_at, ends_at): from the start, not at the end', () => {
    const index = new SilenceIndex([silence({})]);
    expect(index.match('payments', 'acme', prod, T0 - 1)).toBeUndefined();
    expect(index.match('payments', 'acme', prod, T0)?.id).toBe('s1');
    expect(index.match('payments', 'acme', prod, T0 + 3_599_999)?.id).toBe('s1');
    expect(index.match('payments', 'acme', prod, T0 + 3_600_000)).toBeUndefined();
  });

  it('needs the labels to match, and reports the oldest silence that applies', () => {
    const index = new SilenceIndex([
      silence({ id: 'old', matchers: [{ name: 'env', op: 'equal', value: 'dev' }] }),
      silence({ id: 'parent', tenant: 'acme' }),
      silence({ id: 'child', tenant: 'acme.eu' }),
    ]);
    expect(index.match('payments', 'acme', { env: 'staging' }, T0)).toBeUndefined();
    expect(index.match('payments', 'acme', undefined, T0)).toBeUndefined();
    expect(index.match('payments', 'acme', { env: 'dev' }, T0)?.id).toBe('old');
    // The nearest scope is looked at first.
    expect(index.match('payments', 'acme.eu', prod, T0)?.id).toBe('child');
  });

  it("bounds one lookup's regex scans together: many costly silences cannot hold the process, and the ones left do not apply", () => {
    const costly = '[a-z]{0,1000}[a-z]{0,1000}';
    const matchers = Array.from({ length: 63 }, (_, i) => ({ name: `l${i}`, op: 'regex' as const, value: costly }));
    const labels = Object.fromEntries(Array.from({ length: 63 }, (_, i) => [`l${i}`, 'a'.repeat(1024)]));
    const index = new SilenceIndex(Array.from({ length: 3 }, (_, i) => silence({ id: `costly${i}`, matchers })));
    // CPU time, not wall time: a loaded machine (a CI run beside other tests) stretched the latter past the bound.
    const started = process.cpuUsage();
    expect(index.match('payments', 'acme', labels, T0)).toBeUndefined();
    const used = process.cpuUsage(started);
    expect((used.user + used.system) / 1000).toBeLessThan(1000); // 26 s per lookup before the shared budget
    // A cheap silence still applies, and the budget is per lookup: the next one starts afresh.
    const cheap = new SilenceIndex([silence({ id: 'cheap', matchers: [{ name: 'l0', op: 'regex', value: '[a-z]+' }] })]);
    expect(cheap.match('payments', 'acme', labels, T0)?.id).toBe('cheap');
  });

  it('leaves out, and reports, a stored silence whose matcher no longer compiles', () => {
    const unusable: string[] = [];
    const index = new SilenceIndex([silence({ id: 'bad', matchers: [{ name: 'x', op: 'regex', value: '(' }] }), silence({})], (s) => unusable.push(s.id));
    expect(unusable).toEqual(['bad']);
    expect(index.match('payments', 'acme', { x: '(', env: 'prod' }, T0)?.id).toBe('s1');
    expect(index.get('bad')?.id).toBe('bad');
  });
});
