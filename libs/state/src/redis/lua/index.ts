import { applyWritesOnceScript } from './apply-writes-once-1.js';
import { compareAndSwapScript } from './compare-and-swap-1.js';
import { compareAndSwapWithScript } from './compare-and-swap-with-1.js';
import { deleteIfValueScript } from './delete-if-value-1.js';
import { incrementWindowScript } from './increment-window-1.js';
import { indexAddBoundedScript } from './index-add-bounded-1.js';
import { indexPopDueScript } from './index-pop-due-1.js';
import { indexRemoveIfScript } from './index-remove-if-1.js';
import { logAckStageScript } from './log-ack-stage-1.js';
import { logAckWithScript } from './log-ack-with-1.js';
import { logGroupForgetIdleScript } from './log-group-forget-idle-1.js';
import { logGroupLagScript } from './log-group-lag-1.js';
import { logGroupRemoveConsumerScript } from './log-group-remove-consumer-1.js';
import type { LuaScript } from './lua-script.js';
import { readWindowScript } from './read-window-1.js';

export type { LuaScript } from './lua-script.js';
export {
  applyWritesOnceScript,
  compareAndSwapScript,
  compareAndSwapWithScript,
  deleteIfValueScript,
  incrementWindowScript,
  indexAddBoundedScript,
  indexPopDueScript,
  indexRemoveIfScript,
  logAckStageScript,
  logAckWithScript,
  logGroupForgetIdleScript,
  logGroupLagScript,
  logGroupRemoveConsumerScript,
  readWindowScript,
};

/** Every script the Redis StateStore registers on its client at construction. */
export const LUA_SCRIPTS: readonly LuaScript[] = [
  incrementWindowScript,
  readWindowScript,
  compareAndSwapScript,
  compareAndSwapWithScript,
  indexPopDueScript,
  indexAddBoundedScript,
  indexRemoveIfScript,
  logAckWithScript,
  logAckStageScript,
  applyWritesOnceScript,
  logGroupRemoveConsumerScript,
  logGroupForgetIdleScript,
  logGroupLagScript,
  deleteIfValueScript,
];
