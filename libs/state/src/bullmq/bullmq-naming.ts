/**
 * How Sluice names things inside BullMQ. Changing any of this orphans jobs already in Redis,
 * so treat these as durable formats.
 */

/**
 * BullMQ's key prefix: `{<prefix>}:bull`, so keys read `{sluice}:bull:<kind>:wait`. The braces
 * are a hash tag: BullMQ's multi-key Lua scripts need all of a queue's keys in one slot (its docs
 * recommend exactly this). On Redis Cluster the tag also names the queue (`kind`), `{sluice:<kind>}:bull`,
 * so that queues spread over the shards; no Sluice job touches two queues. A single Redis keeps
 * the deployment-wide tag its jobs were written under.
 */
export function bullPrefix(prefix: string, kind?: string): string {
  return kind === undefined ? `{${prefix}}:bull` : `{${prefix}:${kind}}:bull`;
}

/**
 * BullMQ job ids may not contain ':' and may not look like integers (both throw). Map ours
 * injectively: escape '%', ':' and '#', then mark integer-looking results with a leading '#'
 * (a literal '#' is always escaped, so a leading one can only come from this rule).
 * The original id travels in the job data, so this never needs decoding.
 */
export function encodeJobId(id: string): string {
  const escaped = id.replace(/[%:#]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
  return /^-?\d+$/.test(escaped) ? `#${escaped}` : escaped;
}

/** What Sluice stores as BullMQ job data. */
export interface Envelope {
  /** The caller's job or schedule id, before encoding. */
  id: string;
  /** Random per enqueue call; reading it back tells whether this call created the job. */
  token?: string;
  data?: unknown;
  /** Trace context of the enqueuer (Job.trace). */
  trace?: Record<string, string>;
  /** Job.traceLink. */
  link?: true;
}
