#!/usr/bin/env node
// Compiles WebAssembly text plugins (*.wat) to modules (*.wasm) with wabt from the npm registry.
// Usage: node scripts/build-plugins.mjs [source dir] [output dir]   (default: plugins/examples, in place)
import { readdir, readFile, writeFile, mkdir } from 'node:fs/promises';
import { basename, join } from 'node:path';
import wabtInit from 'wabt';

export async function buildPlugins(sourceDir, outDir = sourceDir) {
  const wabt = await wabtInit();
  await mkdir(outDir, { recursive: true });
  const built = [];
  for (const file of (await readdir(sourceDir)).filter((f) => f.endsWith('.wat')).sort()) {
    const module = wabt.parseWat(file, await readFile(join(sourceDir, file), 'utf8'));
    try {
      module.validate();
      const { buffer } = module.toBinary({});
      const out = join(outDir, `${basename(file, '.wat')}.wasm`);
      await writeFile(out, buffer);
      built.push(out);
    } finally {
      module.destroy();
    }
  }
  return built;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [source = 'plugins/examples', out] = process.argv.slice(2);
  for (const file of await buildPlugins(source, out)) console.log(`built ${file}`);
}
