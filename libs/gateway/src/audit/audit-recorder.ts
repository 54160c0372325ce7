import type { AuditStore } from '@sluice/audit';
import { SluiceError, isoString } from '@sluice/core';
import type { ActionIntent } from './action-intents.js';
import type { AuditConfig } from '@sluice/config';
import { logThrottle, type Logger } from '@sluice/telemetry';
import { buildAuditRecord, type RecordInput } from './audit-record.js';
import { AuditSpool } from './audit-spool.js';
import type { ComplianceStatus } from './compliance.js';
import { redactPayload } from './redact.js';

/** One failure line per window: during an outage every dispatch in flight failed its write, a line each. */
const FAILURE_LOG_WINDOW_MS = 30_000;

const UNKNOWN_REASON = 'the process calling the provider stopped before the outcome was recorded: the action may or may not have executed';

export interface AuditRecorderDeps {
  store: AuditStore;
  config: AuditConfig;
  compliance: ComplianceStatus;
  /** Record lifetime in ms for a namespace and tenant (retention policy or gateway default); null = never expires. */
  ttlFor(namespace: string, tenant: string): number | null;
  logger: Logger;
  /** Milliseconds now, for the failure line's window. */
  now(): number;
  onWriteFailed(): void;
  /** Records kept in the process while the backend is away, and how often they are retried. */
  spool: { maxRecords: number; retryMs: number; onDropped(): void; onSizeChanged(size: number): void };
}

interface SpooledRecord {
  draft: AuditRecordDraft;
  ttlMs: number | null;
  intent: string | undefined;
}

type AuditRecordDraft = ReturnType<typeof buildAuditRecord>;

/** `deferred`: the write failed after the action ran; the record waits in the spool (the response says so). */
export type AuditWriteResult = 'written' | 'deferred';

export type AuditEntry = Omit<RecordInput, 'ttlMs' | 'storedPayload'> & {
  /** The intent of its provider call, removed with the record (action-intents.ts). */
  intent?: string | undefined;
};

/**
 * Writes the audit record of one dispatch, awaited before the response: an acknowledged action
 * always has its record. When the write fails, synchronous-write compliance modes fail the
 * request; otherwise the failure is logged and counted, the record goes to the spool (written
 * when the backend answers again), and the outcome is returned marked `audit: "deferred"`.
 */
export class AuditRecorder {
  private readonly spool: AuditSpool<SpooledRecord>;
  private readonly failureLine: (key: string) => number | null;

  constructor(private readonly deps: AuditRecorderDeps) {
    this.failureLine = logThrottle(FAILURE_LOG_WINDOW_MS, deps.now);
    this.spool = new AuditSpool<SpooledRecord>({
      maxEntries: deps.spool.maxRecords,
      retryMs: deps.spool.retryMs,
      write: (entry) => this.append(entry.draft, entry.ttlMs, entry.intent),
      onDropped: deps.spool.onDropped,
      onWritten: (count) => {
        deps.spool.onSizeChanged(this.spool.size);
        deps.logger.info({ written: count, spooled: this.spool.size }, 'spooled audit records written');
      },
    });
  }

  /** Spooled records not yet written. */
  get spooled(): number {
    return this.spool.size;
  }

  /** Tries the spool once more and stops retrying (process shutdown). */
  close(): Promise<void> {
    return this.spool.close();
  }

  private async append(draft: AuditRecordDraft, ttlMs: number | null, intent?: string): Promise<void> {
    await this.deps.store.append(draft, { ttlMs, chain: this.deps.compliance.hash_chain, intent });
  }

  /**
   * The record of an action whose process died during its provider call (an intent past its
   * due time): outcome `unknown`, no payload — the action may or may not have executed.
   */
  async recordUnknown(intent: ActionIntent): Promise<void> {
    const ttlMs = this.deps.compliance.immutable_audit ? null : this.deps.ttlFor(intent.namespace, intent.tenant);
    const draft = buildAuditRecord({
      action: {
        id: intent.id,
        namespace: intent.namespace,
        tenant: intent.tenant,
        provider: intent.provider,
        action_type: intent.action_type,
        payload: {},
        metadata: {},
        created_at: isoString(intent.dispatched_at_ms),
      },
      outcome: { outcome: 'unknown', action_id: intent.id, reason: UNKNOWN_REASON },
      verdict: intent.verdict,
      matchedRule: intent.matched_rule,
      details: undefined,
      caller: intent.caller_id === null ? undefined : { id: intent.caller_id, method: intent.caller_method ?? 'internal' },
      chainId: intent.chain_id ?? undefined,
      dispatchedAtMs: intent.dispatched_at_ms,
      completedAtMs: intent.dispatched_at_ms,
      ttlMs,
      storedPayload: null,
    });
    await this.append(draft, ttlMs);
  }

  async record(entry: AuditEntry): Promise<AuditWriteResult> {
    const { config, compliance } = this.deps;
    const { action } = entry;
    const ttlMs = compliance.immutable_audit ? null : this.deps.ttlFor(action.namespace, action.tenant);
    const storedPayload = config.store_payload ? redactPayload(action.payload, config.redact.fields, config.redact.placeholder) : null;
    // Object.assign, not spread: the same keys without V8's slow path, on every dispatch.
    const draft = buildAuditRecord(Object.assign({ ttlMs, storedPayload }, entry));
    try {
      await this.append(draft, ttlMs, entry.intent);
      return 'written';
    } catch (err) {
      this.deps.onWriteFailed();
      // A 500, never the 503 a lost connection maps to: the action has already run.
      if (compliance.sync_audit_writes) throw new SluiceError('INTERNAL', 'the action ran but its audit record could not be written', { cause: err });
      this.spool.add({ draft, ttlMs, intent: entry.intent });
      this.deps.spool.onSizeChanged(this.spool.size);
      const suppressed = this.failureLine('write');
      if (suppressed !== null) {
        this.deps.logger.error(
          { err, action_id: action.id, namespace: action.namespace, tenant: action.tenant, spooled: this.spool.size, suppressed },
          'audit write failed; record spooled',
        );
      }
      return 'deferred';
    }
  }
}
