import { actionView } from '@sluice/providers';
import type { Feature, FeatureContext } from '../feature.js';
import type { DispatchContext } from '../pipeline/context.js';
import { PluginPool } from './plugin-pool.js';
import { PluginRegistry } from './plugin-registry.js';

export interface PluginsFeature extends Feature {
  /** Null without `wasm.plugin_dir`: `wasm_plugin` rules do not load, GET /v1/plugins is 404. */
  readonly registry: PluginRegistry | null;
  /** For the rules stage: a plugin function's verdict on a dispatch (false when it fails or times out). */
  readonly plugin: ((plugin: string, fn: string, ctx: DispatchContext) => Promise<boolean>) | undefined;
}

/** WASM plugin conditions: modules from `wasm.plugin_dir`, sandboxed (no imports, bounded memory) and run on a worker pool under a CPU budget. */
export async function pluginsFeature(ctx: FeatureContext): Promise<PluginsFeature> {
  const cfg = ctx.config.wasm;
  if (cfg.plugin_dir === null) return { name: 'plugins', registry: null, plugin: undefined };
  const log = ctx.logger.child({ component: 'plugins' });
  const memoryLimitBytes = cfg.memory_limit_mb * 1048576;
  const pool = new PluginPool({
    size: cfg.pool_size,
    cpuLimitMs: cfg.cpu_limit_ms,
    memoryLimitBytes,
    onTimeout: (plugin) => ctx.metrics.pluginTimeouts.inc({ plugin }),
  });
  const registry = new PluginRegistry(cfg.plugin_dir, pool, memoryLimitBytes);
  try {
    const { loaded, errors } = await registry.load();
    for (const e of errors) log.error({ file: e.file, reason: e.message }, 'plugin not loaded');
    log.info({ plugins: loaded.map((p) => p.name) }, 'plugins loaded');
  } catch (err) {
    await pool.close();
    throw err;
  }
  const plugin = async (name: string, fn: string, dispatch: DispatchContext): Promise<boolean> => {
    // The action as a provider is handed it: what the ABI promises a plugin.
    const input = JSON.stringify(actionView(dispatch.action));
    const result = await registry.call(name, fn, input);
    if (result.error !== undefined) log.warn({ plugin: name, fn, reason: result.error }, 'plugin call gave the safe default (no match)');
    return result.verdict;
  };
  return { name: 'plugins', registry, plugin, close: () => pool.close() };
}
