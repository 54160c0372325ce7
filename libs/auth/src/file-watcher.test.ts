import { mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { poll } from '../../../test/support/poll.js';
import { watchFile } from './file-watcher.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('watchFile', () => {
  it('fires once at start (to close the gap after the first read), then on changes', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'sluice-watch-')), 'f.yaml');
    writeFileSync(file, 'a');
    let calls = 0;
    const watcher = watchFile(file, () => calls++, { debounceMs: 20 });
    try {
      await poll('the start-up call', () => calls === 1, { timeoutMs: 1000, intervalMs: 25 });
      writeFileSync(file, 'b');
      await poll('the call for the change', () => calls === 2, { timeoutMs: 2000, intervalMs: 25 });
    } finally {
      watcher.close();
    }
  });

  it('debounces a burst of writes into one call', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'sluice-watch-')), 'f.yaml');
    writeFileSync(file, 'a');
    let calls = 0;
    const watcher = watchFile(file, () => calls++, { debounceMs: 150, pollIntervalMs: 60_000 });
    try {
      await poll('the start-up call', () => calls === 1, { timeoutMs: 1000, intervalMs: 25 });
      for (let i = 0; i < 5; i++) writeFileSync(file, `v${i}`);
      await sleep(400);
      expect(calls).toBe(2);
    } finally {
      watcher.close();
    }
  });

  it('polls stat, so a symlink target changed in another directory is seen', async () => {
    const targetDir = mkdtempSync(join(tmpdir(), 'sluice-target-'));
    const linkDir = mkdtempSync(join(tmpdir(), 'sluice-link-'));
    writeFileSync(join(targetDir, 'real.yaml'), 'a');
    const link = join(linkDir, 'creds.yaml');
    symlinkSync(join(targetDir, 'real.yaml'), link);
    let calls = 0;
    const watcher = watchFile(link, () => calls++, { debounceMs: 10, pollIntervalMs: 50 });
    try {
      await poll('the start-up call', () => calls === 1, { timeoutMs: 1000, intervalMs: 25 });
      writeFileSync(join(targetDir, 'real.yaml'), 'changed content');
      await poll('the call for the changed target', () => calls >= 2, { timeoutMs: 1000, intervalMs: 25 });
    } finally {
      watcher.close();
    }
  });

  it('stops after close()', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'sluice-watch-')), 'f.yaml');
    writeFileSync(file, 'a');
    let calls = 0;
    const watcher = watchFile(file, () => calls++, { debounceMs: 10, pollIntervalMs: 20 });
    watcher.close();
    writeFileSync(file, 'bb');
    await sleep(150);
    expect(calls).toBe(0);
  });
});
