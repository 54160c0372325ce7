import preact from '@preact/preset-vite';
import { defineConfig } from 'vite';

// Served by the API at /ui/; @sluice/client is bundled from its TypeScript source.
// `npm run dev -w @sluice/ui` serves it with hot reload, the API calls proxied to a gateway on :8080.
const GATEWAY = process.env['SLUICE_URL'] ?? 'http://localhost:8080';

export default defineConfig({
  base: '/ui/',
  server: { proxy: { '/v1': GATEWAY, '/admin': GATEWAY } },
  plugins: [preact()],
  resolve: { conditions: ['sluice-source'] },
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: true, chunkSizeWarningLimit: 700 },
});
