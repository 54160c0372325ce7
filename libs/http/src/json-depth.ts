import type { FastifyInstance } from 'fastify';
import { errors } from '@sluice/core';

/** Under the `u` flag a surrogate pair is one code point, so this matches only a lone half. */
const LONE_SURROGATE = /\p{Surrogate}/u;
/** Paths are echoed in the error and the log: keys can be long. */
const MAX_SHOWN_PATH = 200;

/**
 * What is wrong with a parsed JSON body, naming the path (`payload.a.b…`), or null: nesting
 * deeper than `max` levels, or a string or key holding a lone UTF-16 surrogate (JSON's `\ud800`
 * escape allows one; it is not Unicode, and Redis would store it as U+FFFD, merging two names).
 * Iterative: a body a million levels deep costs a loop, never the stack.
 */
function bodyProblem(value: unknown, max: number): string | null {
  const shown = (path: string) => (path.length > MAX_SHOWN_PATH ? `${path.slice(0, MAX_SHOWN_PATH)}…` : path || '(root)');
  const stack: { value: unknown; depth: number; path: string }[] = [{ value, depth: 0, path: '' }];
  while (stack.length > 0) {
    const { value: current, depth, path } = stack.pop() as { value: unknown; depth: number; path: string };
    if (typeof current === 'string') {
      if (LONE_SURROGATE.test(current)) return `JSON body has a lone surrogate (not valid Unicode) at ${shown(path)}`;
      continue;
    }
    if (current === null || typeof current !== 'object') continue;
    if (depth >= max) return `JSON body nested deeper than ${max} levels at ${shown(path)} (server.max_json_depth)`;
    for (const [key, child] of Object.entries(current)) {
      const at = path ? `${path}.${key}` : key;
      if (LONE_SURROGATE.test(key)) return `JSON body has a lone surrogate (not valid Unicode) in a key at ${shown(at)}`;
      stack.push({ value: child, depth: depth + 1, path: at });
    }
  }
  return null;
}

/**
 * Refuses, with a 400 naming the path, a JSON body with a lone surrogate, or nested deeper than
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
