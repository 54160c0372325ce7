/**
 * How Sluice names things inside BullMQ. Changing any of this orphans jobs already in Redis,
 * so treat these as durable formats.
 */

/**
 * BullMQ's key prefix: `{<prefix>}:bull`, so keys read `{sluice}:bull:<kind>:wait`.
 * The braces are a Redis Cluster hash tag that puts every BullMQ key of the deployment in one
 * slot, which BullMQ's multi-key Lua scripts need (its docs recommend exactly this). A per-queue
 * tag would spread queues over nodes, but would also have to live in the durable queue names
 * and breaks any script that touches two queues; job traffic here is small, so one slot it is.
 */
export function bullPrefix(prefix: string): string {
  return `{${prefix}}:bull`;
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
