import type { Redis } from 'ioredis';
import type { StateKey, WriteOp } from '../state-store.js';
import { checkWrites, type CheckedWrite } from '../write-ops.js';
import { scoreArg } from './time-index.js';

/*
 * writeBatch: one pipeline (not MULTI), so one round trip and no cross-key atomicity. Redis runs
 * every command of a pipeline even when an earlier one fails; the call then rejects.
 */

type Command = [name: string, ...args: (string | number)[]];

/** The commands of one write; `ttl` on a counter or index is PEXPIRE NX (Redis >= 7.0). */
function writeCommands(key: string, w: CheckedWrite): Command[] {
  switch (w.op) {
    case 'set':
      return [w.ttl === undefined ? ['set', key, w.value] : ['set', key, w.value, 'PX', w.ttl]];
    case 'increment':
      return withExpiry(['incrby', key, w.by], key, w.ttl);
    case 'indexAdd':
      return withExpiry(['zadd', key, scoreArg(w.score), w.member], key, w.ttl);
    case 'indexRemove':
      return [['zrem', key, w.member]];
    case 'delete':
      return [['del', key]];
  }
}

function withExpiry(command: Command, key: string, ttl: number | undefined): Command[] {
  return ttl === undefined ? [command] : [command, ['pexpire', key, ttl, 'NX']];
}

/**
 * The batch's commands. Consecutive index additions to one key (with one TTL) are one `ZADD`,
 * consecutive removals one `ZREM`, and consecutive deletes (of any keys) one `DEL`: the same
 * result, one command instead of many.
 */
export function writeBatchCommands(ops: readonly WriteOp[], render: (key: StateKey) => string): Command[] {
  const commands: Command[] = [];
  let previous: { key: string; op: string; ttl: number | undefined; command: Command } | undefined;
  for (const w of checkWrites(ops)) {
    const key = render(w.key);
    if (w.op === 'delete' && previous?.op === 'delete') {
      previous.command.push(key);
      continue;
    }
    if (previous !== undefined && previous.key === key && previous.op === w.op && previous.ttl === w.ttl) {
      if (w.op === 'indexAdd') {
        previous.command.push(scoreArg(w.score), w.member);
        continue;
      }
      if (w.op === 'indexRemove') {
        previous.command.push(w.member);
        continue;
      }
    }
    const written = writeCommands(key, w);
    for (const c of written) commands.push(c);
    // The ZADD or ZREM itself, which later members join (its PEXPIRE, if any, follows it).
    const first = written[0];
    previous = first === undefined ? undefined : { key, op: w.op, ttl: w.ttl, command: first };
  }
  return commands;
}

/** A message appended to a log (XADD, untrimmed) after the writes, in the same pipeline. */
export interface LogAppend {
  log: string;
  message: string;
}

export async function writeBatch(client: Redis, ops: readonly WriteOp[], render: (key: StateKey) => string, append?: LogAppend): Promise<void> {
  const commands = writeBatchCommands(ops, render);
  if (append !== undefined) commands.push(['xadd', append.log, '*', 'm', append.message]);
  if (commands.length === 0) return;
  // One command needs no pipeline (its object, per-command promises and result array): an intent's ZADD, per dispatch.
  const [only] = commands;
  if (commands.length === 1 && only !== undefined) {
    await client.call(...only);
    return;
  }
  const results = await client.pipeline(commands).exec();
  if (results === null) throw new Error('writeBatch: the pipeline was discarded');
  const failed = results.find(([err]) => err !== null);
  if (failed !== undefined) throw failed[0];
}
