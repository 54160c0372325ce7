import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/*
 * The workspace's layers, read from the package.json files and the imports in the sources:
 * apps import libs, libs never import apps, core imports no other lib, the worker does not pull
 * in the API, and the graph has no cycle.
 */

const root = fileURLToPath(new URL('../../', import.meta.url));
const workspaces = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { workspaces: string[] }).workspaces;

interface Pkg {
  name: string;
  dir: string;
  layer: 'apps' | 'libs';
  /** @sluice/* packages in its dependencies. */
  deps: string[];
  /** @sluice/* packages its sources import (tests excluded). */
  imports: string[];
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.test.ts') ? [path] : [];
  });
}

const packages: Pkg[] = workspaces.map((dir) => {
  const manifest = JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8')) as {
    name: string;
    dependencies?: Record<string, string>;
    devDependencies?: Record<string, string>;
  };
  const imports = new Set<string>();
  for (const file of sourceFiles(join(root, dir, 'src'))) {
    for (const m of readFileSync(file, 'utf8').matchAll(/(?:from|import)\s*\(?\s*'(@sluice\/[a-z-]+)/g)) imports.add(m[1] as string);
  }
  imports.delete(manifest.name);
  return {
    name: manifest.name,
    dir,
    layer: dir.startsWith('apps/') ? 'apps' : 'libs',
    // A bundled package (apps/ui) declares what it bundles as devDependencies: nothing of it is installed at run time.
    deps: Object.keys({ ...manifest.dependencies, ...manifest.devDependencies }).filter((d) => d.startsWith('@sluice/')),
    imports: [...imports].sort(),
  };
});
const byName = new Map(packages.map((p) => [p.name, p]));
const apps = packages.filter((p) => p.layer === 'apps').map((p) => p.name);

describe('workspace layering', () => {
  it('declares every workspace package it imports', () => {
    for (const p of packages) expect({ pkg: p.name, undeclared: p.imports.filter((i) => !p.deps.includes(i)) }).toEqual({ pkg: p.name, undeclared: [] });
  });

  it('libs never depend on apps', () => {
    for (const p of packages.filter((x) => x.layer === 'libs')) {
      expect({ pkg: p.name, apps: [...p.deps, ...p.imports].filter((d) => apps.includes(d)) }).toEqual({ pkg: p.name, apps: [] });
    }
  });

  it('core depends on no other lib', () => {
    expect(byName.get('@sluice/core')?.deps).toEqual([]);
  });

  it('the worker does not depend on the API', () => {
    const worker = byName.get('@sluice/worker');
    expect(worker?.deps).not.toContain('@sluice/api');
    expect(worker?.imports).not.toContain('@sluice/api');
  });

  it('has no dependency cycle', () => {
    const state = new Map<string, 'visiting' | 'done'>();
    const visit = (name: string, path: string[]): void => {
      if (state.get(name) === 'done') return;
      if (state.get(name) === 'visiting') throw new Error(`dependency cycle: ${[...path, name].join(' -> ')}`);
      state.set(name, 'visiting');
      for (const dep of byName.get(name)?.deps ?? []) visit(dep, [...path, name]);
      state.set(name, 'done');
    };
    for (const p of packages) visit(p.name, []);
  });

  it('finds the packages it checks (the test reads real manifests)', () => {
    expect(packages.length).toBeGreaterThanOrEqual(12);
    expect(byName.get('@sluice/gateway')?.imports).toContain('@sluice/state');
  });
});
