import type { FastifyInstance } from 'fastify';
import { errors } from '@sluice/core';

/** Under the `u` flag a surrogate pair is one code point, so this matches only a lone half. */
const LONE_SURROGATE = /\p{Surrogate}/u;
/** Paths are echoed in the error and the log: keys can be long. */
const MAX_SHOWN_PATH = 200;

/** A value still to look at, and how it was reached: its path is only spelled out for an error. */
interface Visit {
  value: unknown;
  depth: number;
  /** The key in its parent object, or the index in its parent array. */
  key: string | number;
  parent: Visit | null;
}

function pathOf(visit: Visit): string {
  const keys: string[] = [];
  for (let at: Visit | null = visit; at !== null && at.parent !== null; at = at.parent) keys.push(String(at.key));
  const path = keys.reverse().join('.');
  return path.length > MAX_SHOWN_PATH ? `${path.slice(0, MAX_SHOWN_PATH)}…` : path || '(root)';
}

/** A child value's problem: a string is checked at once, an object or array waits on the stack. */
function problemIn(stack: Visit[], value: unknown, key: string | number, parent: Visit, depth: number): string | null {
  if (typeof value === 'string') {
    return LONE_SURROGATE.test(value) ? `JSON body has a lone surrogate (not valid Unicode) at ${pathOf({ value, depth, key, parent })}` : null;
  }
  if (typeof value === 'number') {
    // 1e309 parses to Infinity, which rules and schemas judge and JSON.stringify then sends on as null.
    return Number.isFinite(value)
      ? null
      : `JSON body has a number out of range (beyond a double, read as infinity) at ${pathOf({ value, depth, key, parent })}`;
  }
  if (value !== null && typeof value === 'object') stack.push({ value, depth, key, parent });
  return null;
}

/**
 * What is wrong with a parsed JSON body, naming the path (`payload.a.b…`), or null: nesting
 * deeper than `max` levels, a number too large for a double (`1e309`), or a string or key holding a lone UTF-16 surrogate (JSON's `\ud800`
 * escape allows one; it is not Unicode, and Redis would store it as U+FFFD, merging two names).
 * Iterative: a body a million levels deep costs a loop, never the stack. It runs on every
 * request, so a clean body costs one small object per object or array in it (strings are checked
 * where they are found) and no strings.
 */
function bodyProblem(body: object, max: number): string | null {
  const stack: Visit[] = [{ value: body, depth: 0, key: '', parent: null }];
  while (stack.length > 0) {
    const visit = stack.pop() as Visit;
    if (visit.depth >= max) return `JSON body nested deeper than ${max} levels at ${pathOf(visit)} (server.max_json_depth)`;
    const depth = visit.depth + 1;
    if (Array.isArray(visit.value)) {
      const array: unknown[] = visit.value;
      for (let i = 0; i < array.length; i++) {
        const problem = problemIn(stack, array[i], i, visit, depth);
        if (problem !== null) return problem;
      }
      continue;
    }
    const object = visit.value as Record<string, unknown>;
    // Object.keys, not for-in: on Node 24 a for-in over what JSON.parse built costs several times more.
    const keys = Object.keys(object);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as string;
      if (LONE_SURROGATE.test(key))
        return `JSON body has a lone surrogate (not valid Unicode) in a key at ${pathOf({ value: object[key], depth, key, parent: visit })}`;
      const problem = problemIn(stack, object[key], key, visit, depth);
      if (problem !== null) return problem;
    }
  }
  return null;
}

/**
 * Refuses, with a 400 naming the path, a JSON body with a lone surrogate or a number beyond a double, or nested deeper than
 * `maxDepth` levels: JSON.parse
 * takes any depth, but serialising or walking such a value later (the audit record, a merge patch,
 * a group) would overflow the stack after the action was accepted. Checked before validation, so
 * everything after the door can rely on it.
 */
export function installJsonDepthLimit(app: FastifyInstance, maxDepth: number): void {
  // A callback hook: an async one costs a promise and a microtask on every request.
  app.addHook('preValidation', (request, _reply, done) => {
    const problem = request.body === null || typeof request.body !== 'object' ? null : bodyProblem(request.body, maxDepth);
    done(problem === null ? undefined : errors.badRequest(problem));
  });
}
