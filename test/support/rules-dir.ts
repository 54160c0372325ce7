import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A fresh rules directory holding the given files ({name: YAML text}). */
export function rulesDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-rules-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}
