import { describe, expect, it } from 'vitest';
import { redactPayload } from './redact.js';

describe('redactPayload', () => {
  const payload = { card: { number: '4111', cvc: '123' }, items: [{ sku: 'a' }], to: 'x@example.com' };

  it('replaces existing paths, including array indices, and leaves the input alone', () => {
    const out = redactPayload(payload, ['card.number', 'items.0.sku', 'to'], '[R]');
    expect(out).toEqual({ card: { number: '[R]', cvc: '123' }, items: [{ sku: '[R]' }], to: '[R]' });
    expect(payload.card.number).toBe('4111');
  });

  it('ignores paths that do not exist or run into a non-object', () => {
    expect(redactPayload(payload, ['card.missing', 'to.deeper', 'nothing.here'], '[R]')).toEqual(payload);
  });

  it('returns the same object when there is nothing to redact', () => {
    expect(redactPayload(payload, [], '[R]')).toBe(payload);
  });
});
