import type { StateKey, WriteOp } from './state-store.js';
import { checkScore, positiveMs } from './store-args.js';

/*
 * WriteOp checks shared by writeBatch and compareAndSwapWith on both backends. Every op is
 * checked before the first is applied, so a bad argument rejects the call with nothing written.
 */

/** A WriteOp after its checks: one `key` field for every op, the TTL as whole ms or undefined. */
export type CheckedWrite =
  | { op: 'set'; key: StateKey; value: string; ttl: number | undefined }
  | { op: 'increment'; key: StateKey; by: number; ttl: number | undefined }
  | { op: 'indexAdd'; key: StateKey; member: string; score: number; ttl: number | undefined; fixedScore: boolean }
  | { op: 'indexRemove'; key: StateKey; member: string; ttl: undefined; score: number | undefined }
  | { op: 'delete'; key: StateKey; ttl: undefined };

export function checkWrites(ops: readonly WriteOp[]): CheckedWrite[] {
  return ops.map(checkWrite);
}

function checkWrite(op: WriteOp): CheckedWrite {
  const ttl = op.ttlMs === undefined ? undefined : positiveMs(op.ttlMs, 'ttlMs');
  switch (op.op) {
    case 'set':
      return { op: 'set', key: op.key, value: op.value, ttl };
    case 'increment':
      if (!Number.isSafeInteger(op.by)) throw new RangeError(`increment by must be an integer, got ${op.by}`);
      return { op: 'increment', key: op.key, by: op.by, ttl };
    case 'indexAdd':
      return { op: 'indexAdd', key: op.index, member: op.member, score: checkScore(op.score), ttl, fixedScore: op.fixedScore === true };
    case 'indexRemove':
      return { op: 'indexRemove', key: op.index, member: op.member, ttl: undefined, score: op.score === undefined ? undefined : checkScore(op.score) };
    case 'delete':
      return { op: 'delete', key: op.key, ttl: undefined };
    default:
      // Reachable from untyped callers only.
      throw new RangeError(`unknown write op ${JSON.stringify((op as { op: unknown }).op)}`);
  }
}

/** Only counters and index entries are bulk writes (other ops reach here from untyped callers only). */
export function checkBulk(ops: readonly WriteOp[]): readonly WriteOp[] {
  for (const op of ops) {
    if (op.op !== 'increment' && op.op !== 'indexAdd' && op.op !== 'indexRemove') {
      throw new RangeError(`a bulk write must be increment, indexAdd or indexRemove, got ${JSON.stringify(op.op)}`);
    }
  }
  return ops;
}

/** compareAndSwapWith runs as one script, so every key must live in the CAS key's slot; it only adds. */
export function checkSameScope(key: StateKey, writes: readonly CheckedWrite[]): void {
  for (const w of writes) {
    if (w.op === 'indexRemove' || w.op === 'delete') throw new RangeError(`compareAndSwapWith: ${w.op} is a writeBatch op`);
    if (w.key.namespace !== key.namespace || w.key.tenant !== key.tenant) {
      throw new RangeError(`compareAndSwapWith: write to ${w.key.namespace}/${w.key.tenant} outside the CAS key's scope ${key.namespace}/${key.tenant}`);
    }
  }
}
