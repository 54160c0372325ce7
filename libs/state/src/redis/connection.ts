import { setTimeout as sleep } from 'node:timers/promises';
import { Cluster, Redis, type RedisOptions } from 'ioredis';

/**
 * Where Redis is: exactly one of a single primary's URL, the seed nodes of a Redis Cluster, or
 * the Sentinels that know the primary of a replicated set.
 */
export interface RedisTarget {
  /** A single primary (`redis://[:password@]host:port[/db]`). */
  url?: string | undefined;
  /** Redis Cluster: some of its nodes (`host:port`); the client learns the rest and the slot map. */
  clusterNodes?: readonly string[] | undefined;
  /** Redis Sentinel: the Sentinels (`host:port`); they name the primary and follow its failovers. */
  sentinels?: readonly string[] | undefined;
  /** Redis Sentinel: the monitored primary's name (default `mymaster`). */
  sentinelName?: string | undefined;
  /** Password of the data nodes, for Cluster and Sentinel (a URL carries its own). */
  password?: string | undefined;
  /** Redis Sentinel: the Sentinels' own password, when they require one. */
  sentinelPassword?: string | undefined;
  /**
   * How long a command may wait for its answer before it is rejected (default 5000): a Redis
   * that hangs with its connection open (a stalled failover, a partition without a reset) fails
   * requests instead of holding them until the client gives up and retries while the original
   * still runs. Not applied to the scheduler's blocking worker connections.
   */
  commandTimeoutMs?: number | undefined;
}

const DEFAULT_COMMAND_TIMEOUT_MS = 5000;

export interface RedisConnectionOptions extends RedisTarget {
  /** CLIENT SETNAME, visible in CLIENT LIST. */
  clientName?: string;
  /** How long connect() waits for the first ready connection (default 5000). */
  connectTimeoutMs?: number;
}

/** A client of any topology: a single primary (or the Sentinels' primary), or a whole Cluster. */
export type RedisClient = Redis | Cluster;

export function isCluster(client: RedisClient): client is Cluster {
  return client instanceof Cluster;
}

/**
 * A client that fails commands instead of hanging when Redis is down or stalls: each command is
 * retried across at most two reconnects, and rejected after commandTimeoutMs whatever happens;
 * once the connection has been down for a moment, at once (failFastWhileDown).
 * Commands issued while connecting are queued. `maxRetriesPerRequest: null` (BullMQ's workers,
 * whose blocking reads wait on purpose) retries forever and has no command timeout.
 * `extraTimeoutMs` lengthens the timeout of a connection whose commands block on purpose (WAIT).
 */
export function createClient(
  opts: RedisConnectionOptions,
  extra: { lazyConnect?: boolean; maxRetriesPerRequest?: number | null; extraTimeoutMs?: number } = {},
): RedisClient {
  const blocking = extra.maxRetriesPerRequest === null;
  const common = {
    maxRetriesPerRequest: extra.maxRetriesPerRequest === undefined ? 2 : extra.maxRetriesPerRequest,
    ...(!blocking && { commandTimeout: (opts.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS) + (extra.extraTimeoutMs ?? 0) }),
    connectTimeout: opts.connectTimeoutMs ?? 5000,
    connectionName: opts.clientName,
    ...(opts.password !== undefined && { password: opts.password }),
  };
  const lazyConnect = extra.lazyConnect ?? false;
  if (opts.clusterNodes !== undefined) {
    return new Cluster(opts.clusterNodes.map(hostPort), {
      enableOfflineQueue: true,
      lazyConnect,
      // Writes and reads both go to the primaries: a replica's copy may lag (read-your-writes).
      scaleReads: 'master',
      // MOVED/ASK are followed by the client; a slot whose primary is failing over is retried
      // for up to ~30 × 200 ms (a failover with the default node timeout) before the command fails.
      maxRedirections: 30,
      retryDelayOnFailover: 200,
      retryDelayOnClusterDown: 100,
      retryDelayOnTryAgain: 100,
      redisOptions: common,
    });
  }
  if (opts.sentinels !== undefined) {
    const client = new Redis({
      ...common,
      lazyConnect,
      enableOfflineQueue: true,
      sentinels: opts.sentinels.map(hostPort),
      name: opts.sentinelName ?? 'mymaster',
      ...(opts.sentinelPassword !== undefined && { sentinelPassword: opts.sentinelPassword }),
      // A switchover leaves the old primary up, taking writes, until the Sentinels demote it
      // (seconds later) and it resyncs, dropping them: follow their +switch-master at once.
      failoverDetector: true,
      // Once demoted the old primary answers READONLY as a replica: reconnect through the Sentinels.
      reconnectOnError: isReadOnlyError,
    });
    if (extra.maxRetriesPerRequest === undefined) failFastWhileDown(client);
    return reconnectAfterAbortedConnect(client);
  }
  if (opts.url === undefined) throw new Error('a Redis connection needs a url, cluster nodes or sentinels');
  // A managed Redis fails over by moving its address to the new primary: the old one, demoted,
  // answers READONLY on the connection still open to it, so reconnect (and resolve the name again).
  const client = new Redis(opts.url, { ...common, lazyConnect, enableOfflineQueue: true, reconnectOnError: isReadOnlyError });
  if (extra.maxRetriesPerRequest === undefined) failFastWhileDown(client);
  return client;
}

/** How long after an aborted connection attempt the next one starts. */
const ABORTED_CONNECT_RETRY_MS = 100;

/**
 * ioredis's failover detector answers a +switch-master by dropping the connection attempt under
 * way. One caught while the Sentinels are asked for the primary (a client reconnecting after its
 * primary died) fails, and ioredis then ends the client for good: status 'end', every command
 * "Connection is closed.", until a restart (one replica in five of our failover test). An attempt
 * that ends that way, closed by nobody, starts again; so do those of its duplicates (the pub/sub
 * subscriber, BullMQ's blocking connections).
 */
function reconnectAfterAbortedConnect(client: Redis): Redis {
  let connecting = false;
  client.on('connecting', () => {
    connecting = true;
  });
  for (const settled of ['connect', 'close', 'reconnecting']) {
    client.on(settled, () => {
      connecting = false;
    });
  }
  // Ours through closeClient; BullMQ's (a duplicate's) through disconnect(), which sets the flag.
  const closedByOwner = () => closing.has(client) || (client as unknown as { manuallyClosing: boolean }).manuallyClosing;
  client.on('end', () => {
    if (!connecting || closedByOwner()) return;
    connecting = false;
    setTimeout(() => {
      if (client.status === 'end' && !closedByOwner()) client.connect().catch(() => {});
    }, ABORTED_CONNECT_RETRY_MS).unref();
  });
  const duplicate = client.duplicate.bind(client);
  client.duplicate = ((override?: Partial<RedisOptions>) => reconnectAfterAbortedConnect(duplicate(override))) as Redis['duplicate'];
  return client;
}

/** How long a lost connection may take to come back before commands stop waiting for it. */
const DOWN_GRACE_MS = 500;

/**
 * Once the client has been ready, a command sent while its connection has been down for longer
 * than DOWN_GRACE_MS fails at once ("Stream isn't writeable", a 503 upstream) instead of waiting
 * out the reconnect attempts and the command timeout: during an outage every request touching
 * the store took ~5 s to be refused. A reconnect within the grace (a failover, a dropped socket)
 * still holds commands until it is ready. Commands queued before stay queued. Not for Redis
 * Cluster, whose client keeps commands waiting through a node's failover on purpose.
 */
function failFastWhileDown(client: Redis): void {
  let everReady = false;
  let grace: NodeJS.Timeout | undefined;
  client.on('ready', () => {
    everReady = true;
    clearTimeout(grace);
    grace = undefined;
    client.options.enableOfflineQueue = true;
  });
  client.on('close', () => {
    if (!everReady || grace !== undefined || !client.options.enableOfflineQueue) return;
    grace = setTimeout(() => {
      grace = undefined;
      if (client.status !== 'ready') client.options.enableOfflineQueue = false;
    }, DOWN_GRACE_MS);
    grace.unref();
  });
}

function isReadOnlyError(err: Error): boolean {
  return err.message.startsWith('READONLY');
}

/** `host:port` (or a `redis://` URL of one) as ioredis's node address. */
function hostPort(node: string): { host: string; port: number } {
  const u = new URL(node.includes('://') ? node : `redis://${node}`);
  const port = Number(u.port || 6379);
  if (!u.hostname || !Number.isInteger(port)) throw new Error(`not a host:port: ${node}`);
  return { host: u.hostname.replace(/^\[|\]$/g, ''), port };
}

/** The target for error messages and logs, with any password masked. */
function describeTarget(target: RedisTarget): string {
  if (target.clusterNodes !== undefined) return `the Redis Cluster at ${target.clusterNodes.join(', ')}`;
  if (target.sentinels !== undefined) return `the Redis primary "${target.sentinelName ?? 'mymaster'}" of the Sentinels at ${target.sentinels.join(', ')}`;
  return `Redis at ${redactUrl(target.url ?? '')}`;
}

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
export function waitUntilReady(client: RedisClient, target: RedisTarget, timeoutMs: number): Promise<void> {
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
      finish(new Error(`cannot connect to ${describeTarget(target)}: ${reason}`, { cause: lastError }));
    }, timeoutMs);
    client.on('ready', onReady);
    client.on('error', onError);
  });
}

/** PING with a deadline; false on any error or timeout, never throws. */
export async function pingWithin(client: RedisClient, timeoutMs: number): Promise<boolean> {
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

/** The clients closeClient was asked to close. */
const closing = new WeakSet<RedisClient>();

/** How long QUIT may take before the socket is dropped: a Redis that stalls would hold it a command timeout. */
const QUIT_WITHIN_MS = 1000;

/** QUIT when connected (lets pending replies arrive), then or otherwise drop the socket. */
export async function closeClient(client: RedisClient): Promise<void> {
  // An attempt that ended the client is not started again (reconnectAfterAbortedConnect).
  closing.add(client);
  if (client.status === 'end') return;
  if (client.status === 'ready') {
    const quit = client.quit().then(
      () => true,
      () => false,
    );
    if (await Promise.race([quit, sleep(QUIT_WITHIN_MS, false, { ref: false })])) return;
  }
  client.disconnect();
}
