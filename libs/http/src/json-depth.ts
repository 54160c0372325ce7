import type { FastifyInstance } from 'fastify';
import { errors } from '@sluice/core';

/**
 * The path (`payload.a.b…`) of the first value nested deeper than `max` levels in a parsed JSON
 * body, or null. Iterative: a body a million levels deep costs a loop, never the stack.
 */
function pathDeeperThan(value: unknown, max: number): string | null {
  const stack: { value: unknown; depth: number; path: string }[] = [{ value, depth: 0, path: '' }];
  while (stack.length > 0) {
    const { value: current, depth, path } = stack.pop() as { value: unknown; depth: number; path: string };
    if (current === null || typeof current !== 'object') continue;
    if (depth >= max) return path || '(root)';
    for (const [key, child] of Object.entries(current)) stack.push({ value: child, depth: depth + 1, path: path ? `${path}.${key}` : key });
  }
  return null;
}

/**
 * Refuses, with a 400 naming the path, a JSON body nested deeper than `maxDepth` levels: JSON.parse
 * takes any depth, but serialising or walking such a value later (the audit record, a merge patch,
 * a group) would overflow the stack after the action was accepted. Checked before validation, so
 * everything after the door can rely on it.
 */
export function installJsonDepthLimit(app: FastifyInstance, maxDepth: number): void {
  app.addHook('preValidation', async (request) => {
    if (request.body === null || typeof request.body !== 'object') return;
    const path = pathDeeperThan(request.body, maxDepth);
    if (path !== null) throw errors.badRequest(`JSON body nested deeper than ${maxDepth} levels at ${path} (server.max_json_depth)`);
  });
}
