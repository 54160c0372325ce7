import type { StateKey, WriteOp } from '../state-store.js';
import { checkWrites, type CheckedWrite } from '../write-ops.js';
import { isCluster, type RedisClient } from './connection.js';
import { groupBySlot } from './slots.js';
import { scoreArg } from './time-index.js';

/*
 * writeBatch: a pipeline on the wire (not MULTI): every command sent at once, so one round trip
 * and no cross-key atomicity. Redis runs every command even when an earlier one fails; the call
 * then rejects. On Redis Cluster, one such pipeline per slot, sent together. Not ioredis's
 * Pipeline class: each one copies onto itself every script the client defined (and defines a
 * getter), which cost a quarter or more of a replica's CPU per dispatch (docs/performance.md);
 * the corked connection sends the commands in one write all the same (write-coalescing.ts).
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
  return commandsOf(checkWrites(ops), render);
}

function commandsOf(writes: readonly CheckedWrite[], render: (key: StateKey) => string): Command[] {
  const commands: Command[] = [];
  let previous: { key: string; op: string; ttl: number | undefined; command: Command } | undefined;
  for (const w of writes) {
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

export async function writeBatch(client: RedisClient, ops: readonly WriteOp[], render: (key: StateKey) => string, append?: LogAppend): Promise<void> {
  const writes = checkWrites(ops);
  if (!isCluster(client)) {
    const commands = commandsOf(writes, render);
    if (append !== undefined) commands.push(appendCommand(append));
    await send(client, commands);
    return;
  }
  const groups = groupBySlot(writes, (w) => render(w.key));
  const sent = await Promise.allSettled(groups.map((group) => send(client, commandsOf(group, render))));
  const failed = sent.find((s) => s.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
  // After the writes, as in one pipeline: a reader of the log finds what the message refers to.
  if (append !== undefined) await send(client, [appendCommand(append)]);
}

function appendCommand(append: LogAppend): Command {
  return ['xadd', append.log, '*', 'm', append.message];
}

/** The commands, sent in this turn (one write); rejects with the first error once all have answered. */
async function send(client: RedisClient, commands: Command[]): Promise<void> {
  let failure: { error: unknown } | undefined;
  await Promise.all(
    commands.map((command) =>
      client.call(...command).catch((error: unknown) => {
        failure ??= { error };
      }),
    ),
  );
  if (failure !== undefined) throw failure.error;
}
