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

/**
 * The same checks as checkWrites, without copying the ops: the memory backend applies them as
 * they are (writeKey, writeTtl), where a copy of every write was ~5 % of what a dispatch
 * allocated in one process.
 */
export function validateWrites<T extends WriteOp>(ops: readonly T[]): readonly T[] {
  for (const op of ops) validateWrite(op);
  return ops;
}

/** The key a write changes: an index op's index, any other's key. */
export function writeKey(op: WriteOp): StateKey {
  return op.op === 'indexAdd' || op.op === 'indexRemove' ? op.index : op.key;
}

/** A validated write's TTL as whole ms (rounded up), or undefined. */
export function writeTtl(op: WriteOp): number | undefined {
  return op.ttlMs === undefined ? undefined : Math.ceil(op.ttlMs);
}

function validateWrite(op: WriteOp): void {
  if (op.ttlMs !== undefined) positiveMs(op.ttlMs, 'ttlMs');
  switch (op.op) {
    case 'set':
    case 'delete':
      return;
    case 'increment':
      if (!Number.isSafeInteger(op.by)) throw new RangeError(`increment by must be an integer, got ${op.by}`);
      return;
    case 'indexAdd':
      checkScore(op.score);
      return;
    case 'indexRemove':
      if (op.score !== undefined) checkScore(op.score);
      return;
    default:
      // Reachable from untyped callers only.
      throw new RangeError(`unknown write op ${JSON.stringify((op as { op: unknown }).op)}`);
  }
}

function checkWrite(op: WriteOp): CheckedWrite {
  validateWrite(op);
  const ttl = writeTtl(op);
  switch (op.op) {
    case 'set':
      return { op: 'set', key: op.key, value: op.value, ttl };
    case 'increment':
      return { op: 'increment', key: op.key, by: op.by, ttl };
    case 'indexAdd':
      return { op: 'indexAdd', key: op.index, member: op.member, score: op.score, ttl, fixedScore: op.fixedScore === true };
    case 'indexRemove':
      return { op: 'indexRemove', key: op.index, member: op.member, ttl: undefined, score: op.score };
    case 'delete':
      return { op: 'delete', key: op.key, ttl: undefined };
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
export function checkSameScope(key: StateKey, writes: readonly WriteOp[]): void {
  for (const w of writes) {
    if (w.op === 'indexRemove' || w.op === 'delete') throw new RangeError(`compareAndSwapWith: ${w.op} is a writeBatch op`);
    const target = writeKey(w);
    if (target.namespace !== key.namespace || target.tenant !== key.tenant) {
      throw new RangeError(`compareAndSwapWith: write to ${target.namespace}/${target.tenant} outside the CAS key's scope ${key.namespace}/${key.tenant}`);
    }
  }
}
