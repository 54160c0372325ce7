import { createHash } from 'node:crypto';
import type { RedisClient } from './connection.js';
import { LUA_SCRIPTS, type LuaScript } from './lua/index.js';

/** Keys and arguments of one script call, as built by a pure `<op>Args()` function. */
export interface ScriptCall {
  keys: string[];
  args: (string | number)[];
}

type ScriptFn = (...keysAndArgs: (string | number)[]) => Promise<unknown>;

const names = new Map<LuaScript, string>();

/**
 * `<op>_<8 hex of sha1(source)>`: a changed script gets a new name, so two versions never
 * shadow each other on one client (the "version" is the source itself, which cannot drift).
 */
export function commandName(script: LuaScript): string {
  let name = names.get(script);
  if (name === undefined) {
    name = `${script.name}_${createHash('sha1').update(script.lua).digest('hex').slice(0, 8)}`;
    names.set(script, name);
  }
  return name;
}

/** Registers every script with defineCommand (EVALSHA with an EVAL fallback on NOSCRIPT). */
export function registerScripts(client: RedisClient): void {
  for (const script of LUA_SCRIPTS) {
    // Without numberOfKeys, ioredis expects the key count as each call's first argument.
    const numberOfKeys = script.variadicKeys === true ? undefined : script.numberOfKeys;
    client.defineCommand(commandName(script), { lua: script.lua, numberOfKeys, readOnly: script.readOnly });
  }
}

export function runScript(client: RedisClient, script: LuaScript, call: ScriptCall): Promise<unknown> {
  const variadic = script.variadicKeys === true;
  if (variadic ? call.keys.length < script.numberOfKeys : call.keys.length !== script.numberOfKeys) {
    throw new Error(`${script.name} takes ${variadic ? 'at least ' : ''}${script.numberOfKeys} keys, got ${call.keys.length}`);
  }
  // defineCommand adds methods at runtime, so the typed client has no property for them.
  const fn = (client as unknown as Record<string, ScriptFn | undefined>)[commandName(script)];
  if (fn === undefined) throw new Error(`Lua script ${script.name} is not registered on this client`);
  const keys = variadic ? [call.keys.length, ...call.keys] : call.keys;
  return fn.call(client, ...keys, ...call.args);
}

/** Script replies are arrays of integers and strings; this narrows one to numbers. */
export function numbers(reply: unknown, length: number, op: string): number[] {
  if (!Array.isArray(reply) || reply.length !== length) throw new Error(`unexpected ${op} reply: ${JSON.stringify(reply)}`);
  return reply.map((v) => Number(v));
}
