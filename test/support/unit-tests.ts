import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';

/** Only code that imports test/support/redis-url.js, directly or through other support files, can reach the run's redis-server. */
const SUPPORT_IMPORT = /from '[./]*test\/support\/([a-z-]+)\.js'/g;
/** How support files import each other. */
const SIBLING_IMPORT = /from '\.\/([a-z-]+)\.js'/g;

/** The test/support modules that lead to redis-url.js. */
function redisSupport(root: string): Set<string> {
  const dir = join(root, 'test', 'support');
  const imports = new Map(
    readdirSync(dir)
      .filter((name) => name.endsWith('.ts'))
      .map((name) => [name.slice(0, -3), [...readFileSync(join(dir, name), 'utf8').matchAll(SIBLING_IMPORT)].map((m) => m[1] as string)]),
  );
  const needs = new Set(['redis-url']);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [name, deps] of imports) {
      if (!needs.has(name) && deps.some((d) => needs.has(d))) grew = needs.add(name).size > 0;
    }
  }
  return needs;
}

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
  const needs = redisSupport(root);
  const files = ['libs', 'apps'].flatMap((top) => readdirSync(join(root, top)).flatMap((pkg) => testFilesUnder(join(root, top, pkg))));
  const usesRedis = (file: string) => [...readFileSync(file, 'utf8').matchAll(SUPPORT_IMPORT)].some((m) => needs.has(m[1] as string));
  return files.filter((file) => !usesRedis(file)).map((file) => relative(root, file));
}
