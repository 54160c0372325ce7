import type { AuditStore } from '@sluice/audit';
import { AuditConfig } from '@sluice/config';
import { ManualClock } from '@sluice/core';
import { createLogger } from '@sluice/telemetry';
import { describe, expect, it } from 'vitest';
import { capturedLogLines } from '../../../../test/support/log-lines.js';
import { AuditRecorder, type AuditEntry } from './audit-recorder.js';

function entry(id: string): AuditEntry {
  return {
    action: { id, namespace: 'ns', tenant: 't', provider: 'noop', action_type: 'x', payload: {}, metadata: {}, created_at: '2026-01-01T00:00:00.000Z' },
    outcome: { outcome: 'executed', action_id: id, response: {} },
    verdict: 'allow',
    matchedRule: null,
    details: undefined,
    caller: undefined,
    dispatchedAtMs: 0,
    completedAtMs: 0,
  } as AuditEntry;
}

describe('AuditRecorder', () => {
  it('logs a failed write once per 30 s window, saying how many it stands for; every record is spooled', async () => {
    const clock = new ManualClock(0);
    const { destination, lines } = capturedLogLines();
    const failing = { append: () => Promise.reject(new Error('connect ECONNREFUSED')) } as unknown as AuditStore;
    const recorder = new AuditRecorder({
      store: failing,
      config: AuditConfig.parse({}),
      compliance: { mode: 'none', sync_audit_writes: false, immutable_audit: false, hash_chain: false },
      ttlFor: () => null,
      logger: createLogger({ level: 'info', role: 'test', destination }),
      now: () => clock.now(),
      onWriteFailed: () => {},
      spool: { maxRecords: 100, retryMs: 60_000, onDropped: () => {}, onSizeChanged: () => {} },
    });
    try {
      for (let i = 0; i < 20; i++) expect(await recorder.record(entry(`a${i}`))).toBe('deferred');
      clock.advance(30_000);
      expect(await recorder.record(entry('b'))).toBe('deferred');
      const failures = lines.filter((l) => l['msg'] === 'audit write failed; record spooled');
      expect(failures.map((l) => [l['action_id'], l['suppressed']])).toEqual([
        ['a0', 0],
        ['b', 19],
      ]);
      expect(recorder.spooled).toBe(21);
    } finally {
      await recorder.close();
    }
  });
});
