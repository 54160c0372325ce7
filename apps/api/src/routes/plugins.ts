import { ErrorBody, PluginList, errors } from '@sluice/core';
import type { PluginRegistry } from '@sluice/gateway';
import type { FastifyInstance } from 'fastify';
import { responseSchema } from '@sluice/http';

export async function pluginsRoutes(app: FastifyInstance, opts: { plugins: PluginRegistry | null }): Promise<void> {
  app.get(
    '/v1/plugins',
    {
      config: { access: 'read' },
      schema: {
        tags: ['rules'],
        summary: 'The WASM plugins loaded from wasm.plugin_dir, with their exported functions, and the files that did not load',
        response: { 200: responseSchema(PluginList), 404: responseSchema(ErrorBody) },
      },
    },
    async () => {
      if (!opts.plugins) throw errors.notFoundMessage('no WASM plugin directory is configured (wasm.plugin_dir)');
      return opts.plugins.list();
    },
  );
}
