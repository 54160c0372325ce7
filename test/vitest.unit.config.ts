import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import shared from '../vitest.config.js';
import { unitTestFiles } from './support/unit-tests.js';

const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * `npm run test:unit`: the tests beside the code that need no Redis, without the global setup
 * that starts redis-server. Not isolated: one process per worker runs its files one after
 * another (a fresh module graph per file was half the run's time; these files share no state).
 * `npm test` keeps the one full config (docs/development.md says why).
 * @public `vitest --config` loads it by path.
 */
export default defineConfig({
  ...shared,
  test: { ...shared.test, root, include: unitTestFiles(root), globalSetup: [], isolate: false },
});
