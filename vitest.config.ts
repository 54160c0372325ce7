import { defineConfig } from 'vitest/config';

// Workspace packages resolve to their TypeScript sources through the `sluice-source` export
// condition, so unit tests never need a build. Cluster tests spawn the built CLI (npm test builds first).
export default defineConfig({
  resolve: { conditions: ['sluice-source'] },
  ssr: { resolve: { conditions: ['sluice-source'] } },
  test: {
    globalSetup: ['test/support/global-redis.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: run files in a small pool; suites that share server-wide state use their own prefixes.
    maxWorkers: 2,
    include: ['libs/*/src/**/*.test.ts', 'libs/*/test/**/*.test.ts', 'apps/*/src/**/*.test.ts', 'test/**/*.test.ts'],
  },
});
