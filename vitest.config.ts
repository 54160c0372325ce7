import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { splitCodeTests } from './test/support/test-projects.js';

const { unit, redis } = splitCodeTests(fileURLToPath(new URL('.', import.meta.url)));

// Workspace packages resolve to their TypeScript sources through the `sluice-source` export
// condition, so unit tests never need a build. Cluster tests spawn the built CLI (npm test builds first).
// Two projects, run together by `npm test` (docs/development.md): `unit` needs no redis-server.
export default defineConfig({
  resolve: { conditions: ['sluice-source'] },
  ssr: { resolve: { conditions: ['sluice-source'] } },
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: run files in a small pool; suites that share server-wide state use their own prefixes.
    maxWorkers: 2,
    projects: [
      { extends: true, test: { name: 'unit', include: unit } },
      {
        extends: true,
        test: { name: 'integration', include: [...redis, 'test/**/*.test.ts'], globalSetup: ['test/support/global-redis.ts'] },
      },
    ],
  },
});
