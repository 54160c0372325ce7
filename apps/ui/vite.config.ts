import preact from '@preact/preset-vite';
import { defineConfig } from 'vite';

// Served by the API at /ui/; @sluice/client is bundled from its TypeScript source.
export default defineConfig({
  base: '/ui/',
  plugins: [preact()],
  resolve: { conditions: ['sluice-source'] },
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: true, chunkSizeWarningLimit: 700 },
});
