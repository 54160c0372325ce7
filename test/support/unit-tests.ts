import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';

/** Only a test that imports test/support/redis-url.js can reach the run's redis-server. */
const NEEDS_REDIS = /from '[./]*test\/support\/redis-url\.js'/;

/** The `*.test.ts` files under `dir`, skipping dependencies and build output. */
function testFilesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' || entry.name === 'dist' ? [] : testFilesUnder(path);
    return entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/**
 * The tests beside the code (libs/*, apps/*) that do not need the shared redis-server, relative
 * to `root`: decided by the import, so a moved or renamed file is still classified right.
 */
export function unitTestFiles(root: string): string[] {
  const files = ['libs', 'apps'].flatMap((top) => readdirSync(join(root, top)).flatMap((pkg) => testFilesUnder(join(root, top, pkg))));
  return files.filter((file) => !NEEDS_REDIS.test(readFileSync(file, 'utf8'))).map((file) => relative(root, file));
}
