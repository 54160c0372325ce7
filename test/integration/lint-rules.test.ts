import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

/*
 * `npm run lint` must refuse an import cycle: the project's own biome.json is run over a planted
 * pair of modules that import each other, and over the same pair without the cycle.
 */

const root = fileURLToPath(new URL('../../', import.meta.url));
const biome = join(root, 'node_modules', '@biomejs', 'biome', 'bin', 'biome');
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function lintPlanted(files: Record<string, string>): { status: number | null; output: string } {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-lint-'));
  dirs.push(dir);
  const config = JSON.parse(readFileSync(join(root, 'biome.json'), 'utf8')) as Record<string, unknown>;
  // The planted folder is no git repository; everything else is the project's configuration.
  const { $schema: _schema, vcs: _vcs, ...rules } = config;
  writeFileSync(join(dir, 'biome.json'), JSON.stringify(rules));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const run = spawnSync(process.execPath, [biome, 'lint', '.'], { cwd: dir, encoding: 'utf8' });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe('the lint configuration', () => {
  it('fails on an import cycle', () => {
    const result = lintPlanted({
      'a.ts': "import { b } from './b.js';\n\nexport const a = (): number => b() + 1;\n",
      'b.ts': "import { a } from './a.js';\n\nexport const b = (): number => a() - 1;\n",
    });
    expect(result.output).toContain('noImportCycles');
    expect(result.status).not.toBe(0);
  });

  it('passes the same modules without the cycle', () => {
    const result = lintPlanted({
      'a.ts': "import { b } from './b.js';\n\nexport const a = (): number => b() + 1;\n",
      'b.ts': 'export const b = (): number => 1;\n',
    });
    expect(result.output).not.toContain('noImportCycles');
    expect(result.status).toBe(0);
  });
});
