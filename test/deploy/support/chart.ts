import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type LoadedConfig } from '@sluice/config';
import { parse } from 'yaml';
import { PRODUCTION_VALUES } from './commands.js';
import { REPO_ROOT, type K8sObject } from './helm.js';

/** Rendered YAML: any shape. */
// biome-ignore lint/suspicious/noExplicitAny: rendered YAML documents of every shape, walked freely by the checks.
export type Json = Record<string, any>;

export interface ProductionValues {
  externalRedis: { existingSecret: string; existingSecretPasswordKey: string };
  existingSecret: string;
  rules: { files: Record<string, string> };
}

export function productionValues(): ProductionValues {
  return parse(readFileSync(join(REPO_ROOT, PRODUCTION_VALUES), 'utf8')) as ProductionValues;
}

/** Secrets the production values expect the operator to create (kubectl create secret ...). */
export function externalSecrets(): string[] {
  const v = productionValues();
  return [v.externalRedis.existingSecret, v.existingSecret];
}

/** The sluice.yaml the chart generates (ConfigMap <release>-config, key sluice.yaml). */
function renderedConfigText(docs: readonly K8sObject[]): string {
  const cm = docs.find((d) => d.kind === 'ConfigMap' && d.metadata.name.endsWith('-config')) as Json | undefined;
  const text = cm?.data?.['sluice.yaml'];
  if (typeof text !== 'string') throw new Error('no sluice.yaml ConfigMap rendered');
  return text;
}

/** Loads the generated sluice.yaml exactly as `sluice` does (strict schema: unknown keys throw). */
export function loadRenderedConfig(docs: readonly K8sObject[]): LoadedConfig {
  const file = join(mkdtempSync(join(tmpdir(), 'sluice-chart-config-')), 'sluice.yaml');
  writeFileSync(file, renderedConfigText(docs));
  return loadConfig({ file, env: {} });
}

export function deployment(docs: readonly K8sObject[], suffix: 'api' | 'worker'): Json | undefined {
  return docs.find((d) => d.kind === 'Deployment' && d.metadata.name.endsWith(`-${suffix}`));
}

export function container(d: Json | undefined): Json {
  const c = d?.spec?.template?.spec?.containers?.[0];
  if (!c) throw new Error('no container');
  return c;
}
