import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import shared from '../vitest.config.js';
import { unitTestFiles } from './support/unit-tests.js';

const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * `npm run test:unit`: the tests beside the code that need no Redis, without the global setup
 * that starts redis-server. `npm test` keeps the one full config (docs/development.md says why).
 * @public `vitest --config` loads it by path.
 */
export default defineConfig({
  ...shared,
  test: { ...shared.test, root, include: unitTestFiles(root), globalSetup: [] },
});
