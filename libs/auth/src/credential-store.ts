import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { AuthLogger } from './auth-logger.js';
import { CredentialsError, parseCredentials, type Credentials } from './credentials.js';
import { watchFile, type FileWatcher } from './file-watcher.js';

export interface CredentialStoreOptions {
  /** The credentials YAML. */
  file: string;
  /** Re-read the file when it changes. */
  watch: boolean;
  logger: AuthLogger;
  /** Where SLUICE_AUTH_KEY is read from; default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Fallback stat poll while watching; default 1000 ms. */
  pollIntervalMs?: number;
  /** Default 100 ms. */
  debounceMs?: number;
}

export type ReloadResult = 'reloaded' | 'unchanged' | 'failed';

/**
 * Holds the current credentials. Loads the file at construction (a broken file throws
 * CredentialsError, so start-up stops); when watching, a change is picked up within about a
 * second, and a broken edit keeps the last good credentials (logged). The JWT secret is fixed
 * at start-up: tokens already issued must stay verifiable on every replica.
 */
export class CredentialStore {
  readonly file: string;
  /** The secret read at start-up; later edits to it are ignored with a warning. */
  readonly jwtSecret: string;
  private credentials: Credentials;
  private lastContentHash: string;
  private readonly log: AuthLogger;
  private readonly env: NodeJS.ProcessEnv;
  private readonly watcher: FileWatcher | undefined;

  constructor(opts: CredentialStoreOptions) {
    this.file = opts.file;
    this.log = opts.logger;
    this.env = opts.env ?? process.env;
    const text = this.read();
    this.credentials = this.parse(text);
    this.jwtSecret = this.credentials.jwtSecret;
    this.lastContentHash = contentHash(text);
    this.log.info(this.counts(), 'credentials loaded');
    this.watcher = opts.watch
      ? watchFile(this.file, () => this.reload(), {
          ...(opts.pollIntervalMs === undefined ? {} : { pollIntervalMs: opts.pollIntervalMs }),
          ...(opts.debounceMs === undefined ? {} : { debounceMs: opts.debounceMs }),
          onWatchError: (err) => this.log.warn({ file: this.file, reason: err.message }, 'cannot watch the credentials directory; polling only'),
        })
      : undefined;
  }

  /** The credentials in force now. Read it per request: a reload replaces it. */
  get current(): Credentials {
    return this.credentials;
  }

  /** Re-reads the file now. Never throws: a broken file is logged and the last good one kept. */
  reload(): ReloadResult {
    let text: string;
    try {
      text = this.read();
    } catch (err) {
      this.log.warn({ file: this.file, reason: (err as Error).message }, 'credentials reload failed; keeping the last good credentials');
      return 'failed';
    }
    const hash = contentHash(text);
    if (hash === this.lastContentHash) return 'unchanged';
    // Remembered even when broken, so the same broken content is reported once, not every poll.
    this.lastContentHash = hash;
    let next: Credentials;
    try {
      next = this.parse(text);
    } catch (err) {
      this.log.warn({ file: this.file, reason: (err as Error).message }, 'credentials reload failed; keeping the last good credentials');
      return 'failed';
    }
    if (next.jwtSecret !== this.jwtSecret) {
      this.log.warn({ file: this.file }, 'settings.jwt_secret changed; the secret is fixed at start-up, restart to use the new one');
      next = { ...next, jwtSecret: this.jwtSecret };
    }
    this.credentials = next;
    this.log.info(this.counts(), 'credentials reloaded');
    return 'reloaded';
  }

  close(): void {
    this.watcher?.close();
  }

  private read(): string {
    try {
      return readFileSync(this.file, 'utf8');
    } catch (err) {
      throw new CredentialsError(`cannot read credentials file ${this.file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  }

  private parse(text: string): Credentials {
    const { credentials, warnings } = parseCredentials(text, this.file, this.env.SLUICE_AUTH_KEY);
    for (const warning of warnings) this.log.warn({ file: this.file }, warning);
    return credentials;
  }

  private counts(): Record<string, unknown> {
    return { file: this.file, users: this.credentials.users.size, api_keys: this.credentials.apiKeys.size };
  }
}

function contentHash(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
