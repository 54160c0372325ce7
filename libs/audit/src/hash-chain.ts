import type { AuditRecord } from '@sluice/core';
import { RETRY, retryCas, type StateStore, type WriteOp } from '@sluice/state';
import { chainHeadKey, type TenantScope } from './keys.js';
import { recordHash } from './record-hash.js';

/** A record before the chain fields are known. */
export type UnlinkedRecord = Omit<AuditRecord, 'sequence_number' | 'previous_hash' | 'record_hash'>;

/** The versioned chain head: sequence number and hash of the last linked record. */
export interface ChainHead {
  s: number;
  h: string;
  /**
   * Kept since: the sequence number from which every record of the chain has no expiry (written
   * under immutable audit or a hold), so none of them may be missing; absent while the newest
   * record can expire. Records before it may have expired (retention under an earlier mode).
   */
  k?: number;
}

export interface LinkOptions {
  /** Give up after this many lost compare-and-swaps (default 1000). */
  maxAttempts?: number;
}

/**
 * Links a record into its (namespace, tenant) chain and writes it, atomically across replicas:
 * read the head, compute the next link, then compare-and-swap the head together with the writes
 * `writesFor` returns for the linked record (same slot). A lost swap means another append got
 * that sequence number first: read the new head and try again.
 */
export async function linkIntoChain(
  store: StateStore,
  draft: UnlinkedRecord,
  writesFor: (record: AuditRecord) => WriteOp[],
  opts: LinkOptions = {},
): Promise<LinkedRecord> {
  const headKey = chainHeadKey(draft);
  const maxAttempts = opts.maxAttempts ?? 1000;
  const onExhausted = (): never => {
    throw new Error(`audit hash chain ${draft.namespace}/${draft.tenant}: gave up after ${maxAttempts} conflicting appends`);
  };
  return retryCas({ what: `audit hash chain ${draft.namespace}/${draft.tenant}`, attempts: maxAttempts, onExhausted }, async () => {
    const stored = await store.getVersioned(headKey);
    const head = stored === null ? null : parseHead(stored.value, draft);
    const linked = link(draft, head);
    const next: ChainHead = { s: linked.sequence_number, h: linked.record_hash };
    if (linked.expires_at === null) next.k = head?.k ?? linked.sequence_number;
    const swap = await store.compareAndSwapWith(headKey, stored?.version ?? 0, JSON.stringify(next), writesFor(linked));
    return swap.ok ? linked : RETRY;
  });
}

/** A record with its chain fields filled in. */
export type LinkedRecord = AuditRecord & { sequence_number: number; record_hash: string };

/** The record as the successor of `head` (or as the first link). */
function link(draft: UnlinkedRecord, head: ChainHead | null): LinkedRecord {
  const sequence_number = head === null ? 0 : head.s + 1;
  const previous_hash = head === null ? null : head.h;
  return { ...draft, sequence_number, previous_hash, record_hash: recordHash({ ...draft, previous_hash }) };
}

/** The current head of a chain; null before its first record. */
export async function readChainHead(store: StateStore, scope: TenantScope): Promise<ChainHead | null> {
  const stored = await store.getVersioned(chainHeadKey(scope));
  return stored === null ? null : parseHead(stored.value, scope);
}

function parseHead(value: string, scope: TenantScope): ChainHead {
  const parsed: unknown = JSON.parse(value);
  if (typeof parsed === 'object' && parsed !== null && 's' in parsed && 'h' in parsed) {
    const { s, h } = parsed;
    const k = (parsed as { k?: unknown }).k;
    if (typeof s === 'number' && Number.isSafeInteger(s) && typeof h === 'string')
      return typeof k === 'number' && Number.isSafeInteger(k) ? { s, h, k } : { s, h };
  }
  throw new Error(`audit hash chain ${scope.namespace}/${scope.tenant}: unreadable chain head`);
}
