import type { AuditStore } from '@sluice/audit';
import type { AuditRecord } from '@sluice/core';
import type { AuditConfig } from '@sluice/config';
import type { DeferrableWriteOp } from '@sluice/state';
import type { Logger } from '@sluice/telemetry';
import { buildAuditRecord, type RecordInput } from './audit-record.js';
import type { ComplianceStatus } from './compliance.js';
import { redactPayload } from './redact.js';

/** Something kept up to date from every record (analytics and coverage rollups): its writes are deferred with the record's. */
interface AuditObserver {
  writesFor(record: AuditRecord): readonly DeferrableWriteOp[];
}

export interface AuditRecorderDeps {
  store: AuditStore;
  config: AuditConfig;
  compliance: ComplianceStatus;
  /** Record lifetime in ms for a namespace and tenant (retention policy or gateway default); null = never expires. */
  ttlFor(namespace: string, tenant: string): number | null;
  observers: readonly AuditObserver[];
  logger: Logger;
  onWriteFailed(): void;
}

export type AuditEntry = Omit<RecordInput, 'ttlMs' | 'storedPayload'>;

/**
 * Writes the audit record of one dispatch, awaited before the response: an acknowledged action
 * always has its record. When the write fails, synchronous-write compliance modes fail the
 * request; otherwise the failure is logged and counted and the outcome still returned.
 */
export class AuditRecorder {
  private readonly derived: (record: AuditRecord) => DeferrableWriteOp[];

  constructor(private readonly deps: AuditRecorderDeps) {
    this.derived = (record) => {
      const writes: DeferrableWriteOp[] = [];
      for (const observer of deps.observers) for (const w of observer.writesFor(record)) writes.push(w);
      return writes;
    };
  }

  async record(entry: AuditEntry): Promise<void> {
    const { config, compliance } = this.deps;
    const { action } = entry;
    const ttlMs = compliance.immutable_audit ? null : this.deps.ttlFor(action.namespace, action.tenant);
    const storedPayload = config.store_payload ? redactPayload(action.payload, config.redact.fields, config.redact.placeholder) : null;
    const draft = buildAuditRecord({ ...entry, ttlMs, storedPayload });
    try {
      await this.deps.store.append(draft, { ttlMs, chain: compliance.hash_chain, derived: this.derived });
    } catch (err) {
      this.deps.onWriteFailed();
      if (compliance.sync_audit_writes) throw err;
      this.deps.logger.error({ err, action_id: action.id, namespace: action.namespace, tenant: action.tenant }, 'audit write failed');
    }
  }
}
