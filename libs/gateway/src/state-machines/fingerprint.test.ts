import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { action } from '../../test/state-machine-fixtures.js';
import { deriveFingerprint, fingerprintOf } from './fingerprint.js';

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

describe('event fingerprints', () => {
  it('hashes <field>=<value>; per field, in order, as the reference does', () => {
    const a = action({ action_type: 'disk_full', payload: { host: 'db-1', nested: { level: 3 } } });
    expect(deriveFingerprint(a, ['action_type', 'payload.host'])).toBe(sha('action_type=disk_full;payload.host=db-1;'));
    expect(deriveFingerprint(a, ['payload.nested.level', 'tenant'])).toBe(sha('payload.nested.level=3;tenant=t;'));
    expect(deriveFingerprint(a, ['payload.host', 'action_type'])).not.toBe(deriveFingerprint(a, ['action_type', 'payload.host']));
  });

  it('counts a missing or null field as empty, and reads array items by index', () => {
    const a = action({ payload: { items: ['x', 'y'], gone: null } });
    expect(deriveFingerprint(a, ['payload.missing', 'payload.gone', 'payload.items.1'])).toBe(sha('payload.missing=;payload.gone=;payload.items.1=y;'));
  });

  it('reads metadata.<key> from the metadata object, falling back to the labels', () => {
    const a = action({ metadata: { labels: { cluster: 'eu' }, owner: 'ops' } });
    expect(deriveFingerprint(a, ['metadata.cluster', 'metadata.owner'])).toBe(sha('metadata.cluster=eu;metadata.owner=ops;'));
    expect(deriveFingerprint(a, ['metadata.labels.cluster'])).toBe(sha('metadata.labels.cluster=eu;'));
  });

  it('treats an action.-prefixed path as the bare one', () => {
    const a = action({ payload: { host: 'h' } });
    expect(deriveFingerprint(a, ['action.payload.host'])).toBe(deriveFingerprint(a, ['payload.host']));
  });

  it('prefers the action’s own fingerprint, and has none without fields', () => {
    expect(fingerprintOf(action({ fingerprint: 'own' }), ['payload.host'])).toBe('own');
    expect(fingerprintOf(action(), undefined)).toBeUndefined();
    expect(fingerprintOf(action(), [])).toBeUndefined();
    expect(fingerprintOf(action({ payload: { host: 'h' } }), ['payload.host'])).toBe(sha('payload.host=h;'));
  });
});
