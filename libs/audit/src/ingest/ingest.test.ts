import { AuditFilterFields } from '@sluice/core';
import { describe, expect, it } from 'vitest';
import { decodeIndexMessage, encodeIndexMessage, type IndexedRecord } from './ingest.js';

const record: IndexedRecord = {
  id: '019b76da-a80e-7355-b943-61e98ce9764f',
  dispatched_at: '2026-11-26T06:00:00.000Z',
  expires_at: null,
  sequence_number: 3,
  duration_ms: 1.5,
  namespace: 'billing',
  tenant: 'acme',
  provider: 'email',
  action_type: 'send',
  outcome: 'executed',
  verdict: 'allow',
  matched_rule: null,
  caller_id: 'key-1',
  chain_id: null,
  trace_id: null,
};

describe('ingest messages', () => {
  it('carry what indexing reads: the record fields, the scope code and the intent', () => {
    const message = encodeIndexMessage(record, 'COMPACTIDCOMPACTIDCOMPSCOPE1', '["intent"]');
    expect(decodeIndexMessage(message)).toEqual({ record, scopeCode: 'SCOPE1', intent: '["intent"]' });
  });

  it('read a message of an older writer that lacks later filter fields (null), and ignore fields they do not know', () => {
    const fields = JSON.parse(encodeIndexMessage(record, 'COMPACTIDCOMPACTIDCOMPSCOPE1', undefined)) as unknown[];
    const shorter = JSON.stringify(fields.slice(0, -1));
    expect(decodeIndexMessage(shorter)).toMatchObject({ record: { ...record, [AuditFilterFields.at(-1) as string]: null } });
    expect(decodeIndexMessage(JSON.stringify([...fields, 'later']))).toMatchObject({ record });
  });

  it('leave a newer format alone, and say when nothing (or only the intent) can be read', () => {
    const fields = JSON.parse(encodeIndexMessage(record, 'COMPACTIDCOMPACTIDCOMPSCOPE1', '["i"]')) as unknown[];
    expect(decodeIndexMessage(JSON.stringify([99, ...fields.slice(1)]))).toBe('newer');
    expect(decodeIndexMessage('not json')).toBeNull();
    expect(decodeIndexMessage('["no version"]')).toBeNull();
    expect(decodeIndexMessage(JSON.stringify([1, 'COMPACTIDCOMPACTIDCOMPSCOPE1', '["i"]', 42]))).toEqual({
      record: null,
      scopeCode: 'SCOPE1',
      intent: '["i"]',
    });
  });
});
