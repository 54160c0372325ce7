import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { ConfigError, formatIssues } from './config-error.js';
import { applyEnvOverrides, setPath } from './env-overrides.js';
import { SluiceConfig } from './schema.js';

export interface LoadConfigOptions {
  /** YAML file; falls back to SLUICE_CONFIG; none = all defaults. */
  file?: string;
  env?: NodeJS.ProcessEnv;
  /** Highest precedence (CLI flags), as dotted paths: { 'server.port': 9000 }. */
  overrides?: Record<string, unknown>;
}

export interface LoadedConfig {
  config: SluiceConfig;
  /** The file that was read, if any. */
  file: string | undefined;
  /** Env variables that changed the config. */
  envApplied: string[];
  /** SLUICE_ variables not applied that look like a misspelt override (SLUICE_SERVER_PORT): to warn about. */
  envMisspelt: string[];
}

/**
 * File < environment < flags, then one strict validation. Throws ConfigError naming each bad key.
 * Each layer's own values are checked before the next layer applies, so a bad value in the file
 * (or env) is refused even when a flag (or env) replaces it.
 */
export function loadConfig(opts: LoadConfigOptions = {}): LoadedConfig {
  const env = opts.env ?? process.env;
  const file = opts.file ?? (env.SLUICE_CONFIG || undefined);
  const raw = file ? readYaml(file) : {};
  if (file) refuseBadValues(raw, file);
  const { applied: envApplied, misspelt: envMisspelt } = applyEnvOverrides(raw, env, SluiceConfig);
  if (envApplied.length > 0) refuseBadValues(raw, 'environment');
  for (const [path, value] of Object.entries(opts.overrides ?? {})) {
    if (value !== undefined) setPath(raw, path.split('.'), value);
  }
  const result = SluiceConfig.safeParse(raw);
  if (!result.success) throw new ConfigError(formatIssues(file ?? 'defaults and environment', result.error.issues));
  return { config: result.data, file, envApplied, envMisspelt };
}

/**
 * Refuses values that are wrong on their own (type, range, enum, unknown key) in one layer. Rules
 * across keys (`code: custom`, e.g. auth.enabled needs auth.file) and missing keys wait for the
 * merged config: a later layer may legitimately complete them.
 */
function refuseBadValues(raw: Record<string, unknown>, source: string): void {
  const result = SluiceConfig.safeParse(raw);
  if (result.success) return;
  const bad = result.error.issues.filter((issue) => issue.code !== 'custom' && valueAt(raw, issue.path) !== undefined);
  if (bad.length > 0) throw new ConfigError(formatIssues(source, bad));
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let node = root;
  for (const key of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  return node;
}

/** Parses YAML text into a config object; an empty document is an empty config. */
function parseConfigText(text: string, source: string): Record<string, unknown> {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new ConfigError(`invalid configuration (${source}): not valid YAML: ${(err as Error).message}`);
  }
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== 'object' || Array.isArray(doc)) {
    throw new ConfigError(`invalid configuration (${source}): the top level must be a mapping of sections`);
  }
  return doc as Record<string, unknown>;
}

function readYaml(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read configuration file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  return parseConfigText(text, file);
}
