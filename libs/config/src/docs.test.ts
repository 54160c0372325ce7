import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SluiceConfig } from './schema.js';

/** Every leaf key path of the schema, list entries written `name[]`. */
function leafPaths(schema: z.ZodType, prefix: string): string[] {
  let inner: z.ZodType = schema;
  // Unwrap defaults, prefaults, optionals and refinements down to the structural type.
  for (;;) {
    const def = (inner as { _zod: { def: { type: string; innerType?: z.ZodType; in?: z.ZodType } } })._zod.def;
    if (def.innerType) inner = def.innerType;
    else if (def.type === 'pipe' && def.in) inner = def.in;
    else break;
  }
  if (inner instanceof z.ZodObject) {
    return Object.entries(inner.shape as Record<string, z.ZodType>).flatMap(([k, v]) => leafPaths(v, prefix ? `${prefix}.${k}` : k));
  }
  if (inner instanceof z.ZodArray && inner.element instanceof z.ZodObject) return leafPaths(inner.element, `${prefix}[]`);
  return [prefix];
}

describe('docs/configuration.md', () => {
  const doc = readFileSync(new URL('../../../docs/configuration.md', import.meta.url), 'utf8');

  it('documents every config key', () => {
    const paths = leafPaths(SluiceConfig, '');
    expect(paths.length).toBeGreaterThan(25);
    expect(paths).toContain('providers[].hmac_secret');
    const missing = paths.filter((p) => !doc.includes(`\`${p}\``));
    expect(missing).toEqual([]);
  });
});
