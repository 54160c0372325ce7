import { readFile, readdir } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { PluginPool, PluginVerdict } from './plugin-pool.js';

/** The part of the WebAssembly global used here (the project's TypeScript libs do not declare it). */
interface WasmApi {
  compile(bytes: Uint8Array): Promise<object>;
  Module: {
    imports(module: object): { module: string; name: string; kind: string }[];
    exports(module: object): { name: string; kind: string }[];
  };
}
const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

export interface PluginInfo {
  name: string;
  file: string;
  /** Exported functions: what `wasm_function` may name. */
  exports: string[];
  size_bytes: number;
  memory_bytes: number;
}

export interface PluginLoadError {
  file: string;
  message: string;
}

/**
 * The plugins of `wasm.plugin_dir`: each `<name>.wasm` is compiled, refused when it imports
 * anything (no filesystem, network, clock or environment reaches a plugin) or declares more
 * memory than the limit, and instantiated on every thread of the pool.
 */
export class PluginRegistry {
  private plugins = new Map<string, PluginInfo>();
  private errors: PluginLoadError[] = [];

  constructor(
    private readonly dir: string,
    private readonly pool: PluginPool,
    private readonly memoryLimitBytes: number,
  ) {}

  /** (Re)loads the directory; a plugin that fails is reported and left out. */
  async load(): Promise<{ loaded: PluginInfo[]; errors: PluginLoadError[] }> {
    const files = (await readdir(this.dir)).filter((f) => f.endsWith('.wasm')).sort();
    const plugins = new Map<string, PluginInfo>();
    const errors: PluginLoadError[] = [];
    for (const file of files) {
      try {
        plugins.set(basename(file, '.wasm'), await this.loadOne(file));
      } catch (err) {
        errors.push({ file, message: err instanceof Error ? err.message : String(err) });
      }
    }
    for (const name of this.plugins.keys()) if (!plugins.has(name)) this.pool.unload(name);
    this.plugins = plugins;
    this.errors = errors;
    return { loaded: [...plugins.values()], errors };
  }

  list(): { plugins: PluginInfo[]; errors: PluginLoadError[] } {
    return { plugins: [...this.plugins.values()], errors: this.errors };
  }

  /** Why `fn` of plugin `name` cannot be called now (not loaded, or no such export), or null. */
  missing(name: string, fn: string): string | null {
    const plugin = this.plugins.get(name);
    if (!plugin) return `plugin ${name} is not loaded`;
    return plugin.exports.includes(fn) ? null : `plugin ${name} exports no function ${fn}`;
  }

  /** Calls `fn` of plugin `name` with the action context; an unknown plugin or function gives the safe default. */
  call(name: string, fn: string, input: string): Promise<PluginVerdict> {
    const missing = this.missing(name, fn);
    if (missing) return Promise.resolve({ verdict: false, error: missing });
    return this.pool.call(name, fn, input);
  }

  private async loadOne(file: string): Promise<PluginInfo> {
    const bytes = new Uint8Array(await readFile(join(this.dir, file)));
    const module = await wasm.compile(bytes);
    const imports = wasm.Module.imports(module);
    if (imports.length > 0) {
      const names = imports.map((i) => `${i.module}.${i.name}`).join(', ');
      throw new Error(`imports ${names}: a plugin may import nothing (no filesystem, network, clock or environment)`);
    }
    const exports = wasm.Module.exports(module);
    if (!exports.some((e) => e.kind === 'memory' && e.name === 'memory') || !exports.some((e) => e.kind === 'function' && e.name === 'alloc')) {
      throw new Error('a plugin must export its memory as "memory" and a function "alloc" (see docs/guardrails.md, the plugin ABI)');
    }
    const name = basename(file, '.wasm');
    const memory = await this.pool.load(name, bytes);
    if (memory > this.memoryLimitBytes) {
      this.pool.unload(name);
      throw new Error(
        `declares ${Math.ceil(memory / 1048576)} MB of memory; the limit is ${Math.round(this.memoryLimitBytes / 1048576)} MB (wasm.memory_limit_mb)`,
      );
    }
    const functions = exports.filter((e) => e.kind === 'function' && e.name !== 'alloc').map((e) => e.name);
    return { name, file, exports: functions, size_bytes: bytes.length, memory_bytes: memory };
  }
}
