import type { RedisClient } from './connection.js';
import { windowArgs } from '../store-args.js';
import type { WindowCount, WindowOptions } from '../state-store.js';
import { incrementWindowScript, readWindowScript } from './lua/index.js';
import { numbers, runScript, type ScriptCall } from './scripts.js';

/* Fixed-window counters. Reset times come from Redis server time, so every replica agrees. */

export function incrementWindowArgs(key: string, opts: WindowOptions): ScriptCall {
  const { by, windowMs, limit, windowEndsAtMs } = windowArgs(opts);
  const args = [by, windowMs, limit === undefined ? '' : String(limit)];
  return { keys: [key], args: windowEndsAtMs === undefined ? args : [...args, Math.round(windowEndsAtMs)] };
}

export async function incrementWindow(client: RedisClient, key: string, opts: WindowOptions): Promise<WindowCount> {
  const reply = await runScript(client, incrementWindowScript, incrementWindowArgs(key, opts));
  const [count = 0, allowed = 0, resetAtMs = 0] = numbers(reply, 3, 'incrementWindow');
  return { count, allowed: allowed === 1, resetAtMs };
}

export function readWindowArgs(key: string): ScriptCall {
  return { keys: [key], args: [] };
}

export async function readWindow(client: RedisClient, key: string): Promise<{ count: number; resetAtMs: number | null }> {
  const reply = await runScript(client, readWindowScript, readWindowArgs(key));
  const [count = 0, resetAtMs = -1] = numbers(reply, 2, 'readWindow');
  return { count, resetAtMs: resetAtMs < 0 ? null : resetAtMs };
}
