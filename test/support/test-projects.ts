import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Only a test that imports this module can reach the run's redis-server (see redis-url.ts). */
const NEEDS_REDIS = /from '[./]*test\/support\/redis-url\.js'/;

/** The `*.test.ts` files under `dir`, relative to the repository root, skipping build output. */
function testFilesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' || entry.name === 'dist' ? [] : testFilesUnder(path);
    return entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/**
 * Splits the tests beside the code (libs/*, apps/*) by whether they need the shared
 * redis-server: decided by the import, so a moved or renamed file stays in the right project.
 */
export function splitCodeTests(root: string): { unit: string[]; redis: string[] } {
  const files = ['libs', 'apps'].flatMap((top) => readdirSync(join(root, top)).flatMap((pkg) => testFilesUnder(join(top, pkg))));
  const redis = files.filter((file) => NEEDS_REDIS.test(readFileSync(join(root, file), 'utf8')));
  return { unit: files.filter((file) => !redis.includes(file)), redis };
}
