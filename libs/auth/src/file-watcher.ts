import { statSync, watch, type FSWatcher } from 'node:fs';
import { dirname } from 'node:path';

export interface FileWatcherOptions {
  /** Fallback stat poll; default 1000 ms. */
  pollIntervalMs?: number;
  /** Quiet time after the last event before `onChange` runs; default 100 ms. */
  debounceMs?: number;
  /** fs.watch could not be set up or failed; polling carries on. */
  onWatchError?: (err: Error) => void;
}

export interface FileWatcher {
  close(): void;
}

/**
 * Calls `onChange` (debounced) when `file` may have changed. It watches the file's DIRECTORY,
 * not the file: editors and Kubernetes ConfigMaps replace files by rename or symlink swap, which
 * a watch on the old inode never reports. A stat poll (inode, size, mtime) backs up filesystems
 * where fs.watch is unreliable (network mounts, some containers). `onChange` may fire for
 * unrelated changes in the directory; the caller compares content before reloading.
 */
export function watchFile(file: string, onChange: () => void, opts: FileWatcherOptions = {}): FileWatcher {
  const debounceMs = opts.debounceMs ?? 100;
  let debounce: NodeJS.Timeout | undefined;
  let closed = false;

  const schedule = (): void => {
    if (closed) return;
    if (debounce) clearTimeout(debounce);
    debounce = setTimeout(() => {
      debounce = undefined;
      if (!closed) onChange();
    }, debounceMs);
    debounce.unref();
  };

  let watcher: FSWatcher | undefined;
  try {
    // Any name counts: a ConfigMap update only touches `..data` and timestamped directories.
    watcher = watch(dirname(file), { persistent: false }, schedule);
    watcher.on('error', (err) => {
      opts.onWatchError?.(err);
      watcher?.close();
    });
  } catch (err) {
    opts.onWatchError?.(err as Error);
  }

  let signature = statSignature(file);
  const poll = setInterval(() => {
    const now = statSignature(file);
    if (now !== signature) {
      signature = now;
      schedule();
    }
  }, opts.pollIntervalMs ?? 1000);
  poll.unref();

  // Closes the gap between the caller's first read and the watch being in place.
  schedule();

  return {
    close(): void {
      closed = true;
      clearInterval(poll);
      if (debounce) clearTimeout(debounce);
      watcher?.close();
    },
  };
}

/** Follows symlinks, so a ConfigMap swap changes the inode seen here. */
function statSignature(file: string): string {
  try {
    const s = statSync(file);
    return `${s.ino}:${s.size}:${s.mtimeMs}`;
  } catch (err) {
    return `missing:${(err as NodeJS.ErrnoException).code ?? 'error'}`;
  }
}
