import type { RedisClient } from './connection.js';
import type { CasResult, StateKey, WriteOp } from '../state-store.js';
import { checkSameScope, checkWrites, type CheckedWrite } from '../write-ops.js';
import { compareAndSwapWithScript } from './lua/index.js';
import { numbers, runScript, type ScriptCall } from './scripts.js';
import { scoreArg } from './time-index.js';

/* compareAndSwap plus writes in one Lua script (lua/compare-and-swap-with-1.ts). */

export function compareAndSwapWithArgs(
  key: StateKey,
  expectedVersion: number,
  value: string,
  writes: readonly WriteOp[],
  render: (key: StateKey) => string,
): ScriptCall {
  const checked = checkWrites(writes);
  checkSameScope(key, writes);
  return {
    keys: [render(key), ...checked.map((w) => render(w.key))],
    args: [expectedVersion, value, ...checked.flatMap(writeArgs)],
  };
}

/** Four ARGV per write: op, value|by|score, member or '', ttlMs or ''. */
function writeArgs(w: CheckedWrite): (string | number)[] {
  const ttl = w.ttl ?? '';
  switch (w.op) {
    case 'set':
      return ['set', w.value, '', ttl];
    case 'increment':
      return ['incr', w.by, '', ttl];
    case 'indexAdd':
      return ['zadd', scoreArg(w.score), w.member, ttl];
    case 'indexRemove':
    case 'delete':
      throw new RangeError(`compareAndSwapWith: ${w.op} is a writeBatch op`);
  }
}

export async function compareAndSwapWith(
  client: RedisClient,
  key: StateKey,
  expectedVersion: number,
  value: string,
  writes: readonly WriteOp[],
  render: (key: StateKey) => string,
): Promise<CasResult> {
  const call = compareAndSwapWithArgs(key, expectedVersion, value, writes, render);
  const reply = await runScript(client, compareAndSwapWithScript, call);
  const [ok = 0, version = 0] = numbers(reply, 2, 'compareAndSwapWith');
  return { ok: ok === 1, version };
}
