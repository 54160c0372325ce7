import { Redis } from 'ioredis';

export interface RedisConnectionOptions {
  url: string;
  /** CLIENT SETNAME, visible in CLIENT LIST. */
  clientName?: string;
  /** How long connect() waits for the first ready connection (default 5000). */
  connectTimeoutMs?: number;
}

/**
 * A client that fails commands instead of hanging when Redis is down: each command is retried
 * across at most two reconnects, then rejected. Commands issued while connecting are queued.
 */
export function createClient(opts: RedisConnectionOptions): Redis {
  return new Redis(opts.url, {
    maxRetriesPerRequest: 2,
    enableOfflineQueue: true,
    connectTimeout: opts.connectTimeoutMs ?? 5000,
    connectionName: opts.clientName,
  });
}

/** The URL with any password masked, for error messages and logs. */
function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparseable Redis URL)';
  }
}

/** Resolves when the client is ready; rejects with the last connection error after `timeoutMs`. */
export function waitUntilReady(client: Redis, url: string, timeoutMs: number): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    let lastError: unknown;
    const onError = (err: unknown) => {
      lastError = err;
    };
    const finish = (err?: Error) => {
      clearTimeout(timer);
      client.off('ready', onReady);
      client.off('error', onError);
      if (err) reject(err);
      else resolve();
    };
    const onReady = () => finish();
    const timer = setTimeout(() => {
      const reason = lastError instanceof Error ? lastError.message : `no answer within ${timeoutMs} ms`;
      finish(new Error(`cannot connect to Redis at ${redactUrl(url)}: ${reason}`, { cause: lastError }));
    }, timeoutMs);
    client.on('ready', onReady);
    client.on('error', onError);
  });
}

/** PING with a deadline; false on any error or timeout, never throws. */
export async function pingWithin(client: Redis, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  try {
    const answer = client.ping().then(
      (reply) => reply === 'PONG',
      () => false,
    );
    return await Promise.race([answer, timeout]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}
