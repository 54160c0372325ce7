import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';
import { ConfigError } from './config-error.js';
import { envKeyPath } from './env-key-path.js';

/** Environment variables that are not config overrides. */
const RESERVED = new Set(['CONFIG', 'AUTH_KEY']);

/** The SLUICE_ variables that changed the config, and those that look like a misspelt override. */
export interface EnvOverrides {
  applied: string[];
  misspelt: string[];
}

/**
 * `SLUICE_STATE__BACKEND=redis` sets `state.backend`. Sections are separated by `__`; each value
 * is read as a YAML scalar or flow collection (`8080` → number, `[a, b]` → list); field names are
 * matched case-insensitively, map keys taken as written (env-key-path.ts). A variable whose
 * first segment is not a config section is an error when it has `__` (a typo must not be silent);
 * other SLUICE_ variables (SLUICE_CONFIG, SLUICE_AUTH_KEY, test settings) are left alone.
 */
export function applyEnvOverrides(target: Record<string, unknown>, env: NodeJS.ProcessEnv, schema: z.ZodObject): EnvOverrides {
  const sections = Object.keys(schema.shape);
  const applied: string[] = [];
  const misspelt: string[] = [];
  for (const [name, raw] of Object.entries(env)) {
    if (!name.startsWith('SLUICE_') || raw === undefined) continue;
    const rest = name.slice('SLUICE_'.length);
    if (RESERVED.has(rest)) continue;
    const path = envKeyPath(schema, rest.split('__'));
    const head = path[0] ?? '';
    if (!sections.includes(head)) {
      if (path.length > 1) throw new ConfigError(`invalid configuration (environment): ${name} names unknown key "${path.join('.')}"`);
      // One underscore where `__` belongs (SLUICE_SERVER_PORT): not applied, since SLUICE_ names
      // outside the config exist (a host's docker-compose settings, a client's SLUICE_URL), but named for a warning.
      const lower = rest.toLowerCase();
      if (sections.some((section) => lower.startsWith(`${section}_`))) misspelt.push(name);
      continue;
    }
    setPath(target, path, parseValue(name, raw));
    applied.push(name);
  }
  return { applied, misspelt };
}

function parseValue(name: string, raw: string): unknown {
  try {
    return parseYaml(raw) ?? '';
  } catch (err) {
    throw new ConfigError(`invalid configuration (environment): ${name} is not a valid value: ${(err as Error).message}`);
  }
}

export function setPath(target: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let node: Record<string, unknown> | unknown[] = target;
  path.forEach((segment, i) => {
    const last = i === path.length - 1;
    const key: string | number = Array.isArray(node) ? Number(segment) : segment;
    const container = node as Record<string | number, unknown>;
    if (last) {
      container[key] = value;
      return;
    }
    const next = container[key];
    if (next === null || typeof next !== 'object') {
      container[key] = /^\d+$/.test(path[i + 1] ?? '') ? [] : {};
    }
    node = container[key] as Record<string, unknown>;
  });
}
