import { describe, expect, it } from 'vitest';
import { compileFieldPath } from './field-path.js';
import { makeInput, type InputParts } from '../../test/rule-fixtures.js';

function read(path: string, parts: InputParts = {}): unknown {
  const compiled = compileFieldPath(path);
  if (!compiled.ok) throw new Error(compiled.message);
  return compiled.read(makeInput(parts));
}

function refusal(path: string): string {
  const compiled = compileFieldPath(path);
  if (compiled.ok) throw new Error(`expected ${path} to be refused`);
  return compiled.message;
}

describe('field paths: action fields', () => {
  it.each([
    ['action.namespace', 'billing'],
    ['action.tenant', 'acme'],
    ['action.provider', 'email'],
    ['action.action_type', 'send_invoice'],
  ])('%s reads the action field', (path, expected) => {
    expect(read(path)).toBe(expected);
  });

  it.each(['id', 'dedup_key', 'status', 'fingerprint'])('action.%s reads the optional field and is absent when unset', (field) => {
    expect(read(`action.${field}`, { action: { [field]: 'v1' } })).toBe('v1');
    expect(read(`action.${field}`)).toBeUndefined();
  });

  it('refuses sub-fields of scalar action fields', () => {
    expect(refusal('action.tenant.name')).toMatch(/action.tenant has no sub-fields/);
  });

  it('refuses unknown action fields and roots', () => {
    expect(refusal('action.colour')).toMatch(/unknown action field "colour"/);
    expect(refusal('action')).toMatch(/unknown action field ""/);
    expect(refusal('payload.amount')).toMatch(/unknown field path root "payload"/);
    expect(refusal('time.hour')).toMatch(/unknown field path root "time"/);
  });

  it('refuses empty paths and empty segments', () => {
    expect(refusal('')).toMatch(/empty/);
    expect(refusal('action..tenant')).toMatch(/empty segment/);
    expect(refusal('action.payload.')).toMatch(/empty segment/);
  });

  it('refuses overlong paths', () => {
    expect(refusal(`action.payload.${'a'.repeat(600)}`)).toMatch(/longer than 512/);
  });
});

describe('field paths: payload', () => {
  const payload = { amount: 150, customer: { tier: 'gold', address: { city: 'Lyon' } }, items: [{ sku: 'A1' }, { sku: 'B2' }], flag: false, nothing: null };

  it('reads nested keys with dots', () => {
    expect(read('action.payload.amount', { payload })).toBe(150);
    expect(read('action.payload.customer.address.city', { payload })).toBe('Lyon');
  });

  it('indexes arrays with numeric segments', () => {
    expect(read('action.payload.items.0.sku', { payload })).toBe('A1');
    expect(read('action.payload.items.1.sku', { payload })).toBe('B2');
  });

  it('is absent past the end of an array, for non-numeric segments on arrays, and for negative-looking indexes', () => {
    expect(read('action.payload.items.2.sku', { payload })).toBeUndefined();
    expect(read('action.payload.items.first', { payload })).toBeUndefined();
    expect(read('action.payload.items.length', { payload })).toBeUndefined();
    expect(read('action.payload.items.-1', { payload })).toBeUndefined();
    expect(read('action.payload.items.01', { payload })).toBeUndefined();
  });

  it('uses numeric segments as keys on objects', () => {
    expect(read('action.payload.codes.404', { payload: { codes: { '404': 'missing' } } })).toBe('missing');
  });

  it('is absent for missing keys and for paths through scalars', () => {
    expect(read('action.payload.missing', { payload })).toBeUndefined();
    expect(read('action.payload.amount.value', { payload })).toBeUndefined();
    expect(read('action.payload.customer.tier.x', { payload })).toBeUndefined();
    expect(read('action.payload.nothing.x', { payload })).toBeUndefined();
  });

  it('keeps null and false as present values', () => {
    expect(read('action.payload.nothing', { payload })).toBeNull();
    expect(read('action.payload.flag', { payload })).toBe(false);
  });

  it('reads only own keys, never the prototype chain', () => {
    expect(read('action.payload.toString', { payload })).toBeUndefined();
    expect(read('action.payload.constructor', { payload })).toBeUndefined();
    expect(read('action.payload.__proto__', { payload })).toBeUndefined();
  });

  it('reads the whole payload for action.payload', () => {
    expect(read('action.payload', { payload })).toBe(payload);
  });
});

describe('field paths: metadata and state', () => {
  it('reads metadata keys and nested metadata', () => {
    const metadata = { env: 'prod', labels: { team: 'core' } };
    expect(read('action.metadata.env', { metadata })).toBe('prod');
    expect(read('action.metadata.labels.team', { metadata })).toBe('core');
    expect(read('action.metadata.absent', { metadata })).toBeUndefined();
  });

  it('reads state.current and other state keys', () => {
    const state = { current: 'open', counters: { retries: 2 } };
    expect(read('state.current', { state })).toBe('open');
    expect(read('state.counters.retries', { state })).toBe(2);
    expect(read('state.current')).toBeUndefined();
  });

  it('needs a key after state', () => {
    expect(refusal('state')).toMatch(/needs a key/);
  });
});
