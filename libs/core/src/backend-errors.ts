/** Socket-level failures: the peer is down, unreachable or went away mid-command. */
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

/**
 * What ioredis rejects a command with while Redis is away (matched by shape: core does not depend
 * on ioredis), and what a Redis Cluster answers while a slot has no primary (a failover).
 */
const CLIENT_GIVE_UPS = [
  'Connection is closed.',
  "Stream isn't writeable",
  'Reached the max retries per request limit',
  'Too many Cluster redirections',
  'Failed to refresh slots cache',
  'None of startup nodes is available',
  'CLUSTERDOWN',
  // ioredis's commandTimeout: Redis holds the connection open and does not answer (stalled).
  'Command timed out',
  // Full, not broken: Redis at maxmemory under noeviction, and the memory backend at
  // state.memory_max_keys / memory_max_bytes (its StateFullError says it the same way).
  'OOM command not allowed',
  // Redis refusing writes for now: a demoted primary (READONLY, until the client reconnects to
  // the new one), a failed snapshot (MISCONF, until one succeeds), a script running past its
  // limit (BUSY), a replica without its primary (MASTERDOWN), too few replicas (NOREPLICAS).
  'READONLY ',
  'MISCONF ',
  'BUSY ',
  'MASTERDOWN ',
  'NOREPLICAS ',
];

/**
 * True when `err` (or an error it wraps) says the state backend could not be reached or is full
 * for now, as opposed to a bug or a malformed command: such a request is answered 503
 * STATE_UNAVAILABLE with Retry-After, not 500. Provider failures never get here (the execute stage turns them into
 * `failed` outcomes).
 */
export function isBackendConnectionError(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e.name === 'MaxRetriesPerRequestError') return true;
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && CONNECTION_CODES.has(code)) return true;
    if (CLIENT_GIVE_UPS.some((m) => e instanceof Error && e.message.startsWith(m))) return true;
  }
  return false;
}

/** PostgreSQL's SQLSTATEs for a schema or a table that does not exist (invalid_schema_name, undefined_table). */
const UNMIGRATED_CODES = new Set(['3F000', '42P01']);

/**
 * True when `err` (or an error it wraps) is PostgreSQL saying the audit database has no schema
 * yet: API replicas start before the workers that migrate it. Answered 503 NOT_READY, not 500.
 */
export function isUnmigratedDatabaseError(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && UNMIGRATED_CODES.has(code)) return true;
  }
  return false;
}
