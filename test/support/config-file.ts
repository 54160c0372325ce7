import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Writes a sluice.yaml of `text` into a fresh temporary directory and returns its path. */
export function writeConfigFile(text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'sluice-config-')), 'sluice.yaml');
  writeFileSync(file, text);
  return file;
}
