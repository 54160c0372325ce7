import type { QuotaPolicy } from '@sluice/core';
import { ConfigError, QuotaPolicyConfig } from '@sluice/config';
import { describe, expect, it } from 'vitest';
import { configQuotaPolicies } from './quota-config.js';
import { QuotaIndex } from './quota-index.js';

const policy = (id: string, namespace: string, tenant: string, enabled = true): QuotaPolicy => ({
  id,
  namespace,
  tenant,
  max_actions: 10,
  window: 'hourly',
  overage_behavior: 'block',
  enabled,
  source: 'config',
});

describe('quota policy matching', () => {
  const index = new QuotaIndex([policy('exact', 'ns', 't'), policy('any-ns', '*', 't'), policy('any-t', 'ns', '*'), policy('any', '*', '*')]);

  it('prefers an exact tenant, then an exact namespace', () => {
    expect(index.match('ns', 't')?.id).toBe('exact');
    expect(index.match('other', 't')?.id).toBe('any-ns');
    expect(index.match('ns', 'u')?.id).toBe('any-t');
    expect(index.match('other', 'u')?.id).toBe('any');
  });

  it('an exact tenant under * namespace beats an exact namespace with * tenant', () => {
    const two = new QuotaIndex([policy('ns-wide', 'ns', '*'), policy('tenant-wide', '*', 't')]);
    expect(two.match('ns', 't')?.id).toBe('tenant-wide');
  });

  it('applies nothing when nothing matches', () => {
    expect(new QuotaIndex([policy('exact', 'ns', 't')]).match('ns', 'u')).toBeUndefined();
  });

  it('skips disabled policies (a less specific one then applies)', () => {
    const idx = new QuotaIndex([policy('off', 'ns', 't', false), policy('any', '*', '*')]);
    expect(idx.match('ns', 't')?.id).toBe('any');
    expect(new QuotaIndex([policy('off', 'ns', 't', false)]).match('ns', 't')).toBeUndefined();
    expect(idx.get('off')?.enabled).toBe(false);
  });

  it('lists by namespace, tenant, id', () => {
    expect(index.list().map((p) => p.id)).toEqual(['any', 'any-ns', 'any-t', 'exact']);
  });
});

describe('config quota policies', () => {
  const entry = (id: string, namespace: string, tenant: string) => QuotaPolicyConfig.parse({ id, namespace, tenant, max_actions: 5, window: 'daily' });

  it('maps entries to read-only config policies with defaults', () => {
    expect(configQuotaPolicies([entry('a', 'ns', 't')])).toEqual([
      { id: 'a', namespace: 'ns', tenant: 't', max_actions: 5, window: 'daily', overage_behavior: 'block', enabled: true, source: 'config' },
    ]);
  });

  it('refuses duplicate ids and duplicate (namespace, tenant) pairs, naming them', () => {
    const run = () => configQuotaPolicies([entry('a', 'ns', 't'), entry('a', 'ns', 'u'), entry('b', 'ns', 't')]);
    expect(run).toThrow(ConfigError);
    expect(run).toThrow(/quotas\.policies\.1\.id: duplicate id "a"/);
    expect(run).toThrow(/policies "a" and "b" both apply to namespace "ns", tenant "t"/);
  });
});
