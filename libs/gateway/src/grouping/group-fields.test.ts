import type { Action } from '@sluice/core';
import { describe, expect, it } from 'vitest';
import { groupIdentity, readGroupField } from './group-fields.js';

const action = (over: Partial<Action> = {}): Action => ({
  id: 'a1',
  namespace: 'ns',
  tenant: 't',
  provider: 'hook',
  action_type: 'alert',
  payload: { cluster: 'c1', nested: { items: [{ sku: 'x' }] }, count: 3 },
  metadata: { host: 'h1', labels: { env: 'prod' } },
  created_at: '',
  ...over,
});

describe('group fields', () => {
  it('reads paths written without (or with) the action. prefix', () => {
    const a = action({ fingerprint: 'fp' });
    expect(readGroupField(a, 'payload.cluster')).toBe('c1');
    expect(readGroupField(a, 'action.payload.nested.items.0.sku')).toBe('x');
    expect(readGroupField(a, 'metadata.host')).toBe('h1');
    expect(readGroupField(a, 'action_type')).toBe('alert');
    expect(readGroupField(a, 'action.fingerprint')).toBe('fp');
    expect(readGroupField(a, 'payload.missing')).toBeUndefined();
    expect(readGroupField(a, 'bogus')).toBeUndefined();
  });

  it('falls back from metadata.<key> to metadata.labels.<key>, as the reference reads it', () => {
    expect(readGroupField(action(), 'metadata.env')).toBe('prod');
  });

  it('the key is a SHA-256 hex, equal for equal values and scoped by namespace, tenant and rule', () => {
    const { groupKey, labels } = groupIdentity(action(), 'r', ['payload.cluster', 'payload.count', 'payload.missing']);
    expect(groupKey).toMatch(/^[0-9a-f]{64}$/);
    expect(labels).toEqual({ 'payload.cluster': 'c1', 'payload.count': '3' });
    expect(
      groupIdentity(action({ id: 'other', payload: { cluster: 'c1', count: 3 } }), 'r', ['payload.cluster', 'payload.count', 'payload.missing']).groupKey,
    ).toBe(groupKey);
    const by = ['payload.cluster'];
    const base = groupIdentity(action(), 'r', by).groupKey;
    expect(groupIdentity(action({ tenant: 'u' }), 'r', by).groupKey).not.toBe(base);
    expect(groupIdentity(action({ namespace: 'm' }), 'r', by).groupKey).not.toBe(base);
    expect(groupIdentity(action(), 'other-rule', by).groupKey).not.toBe(base);
    expect(groupIdentity(action({ payload: { cluster: 'c2' } }), 'r', by).groupKey).not.toBe(base);
  });

  it('cannot be fooled by separators inside names or values', () => {
    const a = groupIdentity(action({ namespace: 'a:b', tenant: 'c' }), 'r', ['payload.cluster']).groupKey;
    const b = groupIdentity(action({ namespace: 'a', tenant: 'b:c' }), 'r', ['payload.cluster']).groupKey;
    expect(a).not.toBe(b);
  });
});
