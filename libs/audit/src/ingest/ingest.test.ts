import { AuditFilterFields } from '@sluice/core';
import { describe, expect, it } from 'vitest';
import { decodeIndexMessage, encodeIndexMessage, type IndexedRecord } from './ingest.js';

const record: IndexedRecord & { action_id: string } = {
  action_id: 'act-1',
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
    const { action_id, ...indexed } = record;
    expect(decodeIndexMessage(message)).toEqual({ record: indexed, scopeCode: 'SCOPE1', intent: '["intent"]', actionId: action_id });
  });

  it('read a message of an older writer that lacks later fields (null), and ignore fields they do not know', () => {
    const { action_id, ...indexed } = record;
    const fields = JSON.parse(encodeIndexMessage(record, 'COMPACTIDCOMPACTIDCOMPSCOPE1', undefined)) as unknown[];
    expect(decodeIndexMessage(JSON.stringify(fields.slice(0, -1)))).toMatchObject({ record: indexed, actionId: null });
    expect(decodeIndexMessage(JSON.stringify(fields.slice(0, -2)))).toMatchObject({
      record: { ...indexed, [AuditFilterFields.at(-1) as string]: null },
      actionId: null,
    });
    expect(decodeIndexMessage(JSON.stringify([...fields, 'later']))).toMatchObject({ record: indexed, actionId: action_id });
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
      actionId: null,
    });
  });
});
