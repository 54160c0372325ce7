import type { Clock } from '@sluice/core';
import { GLOBAL_SCOPE, type StateKey, type StateStore } from '@sluice/state';

/** The key kind of stream connection leases: never rename without a migration. */
const LEASE_KIND = 'stream-lease';
/** Every live connection of the cluster, whatever its bucket: "is anyone listening?". */
const ALL: StateKey = { kind: LEASE_KIND, ...GLOBAL_SCOPE, id: 'all' };

const bucketKey = (bucket: string): StateKey => ({ kind: LEASE_KIND, ...GLOBAL_SCOPE, id: `bucket:${bucket}` });

/**
 * Stream connections counted cluster-wide. Each connection holds a lease in its bucket's index
 * (score = when it expires) that its replica renews; a replica that dies stops renewing, and its
 * leases stop counting once they expire. Taking a slot is one bounded add: replicas racing for
 * a tenant's last slot, one of them gets it.
 */
export class ConnectionLeases {
  constructor(
    private readonly state: StateStore,
    private readonly clock: Clock,
    private readonly ttlMs: number,
  ) {}

  /** False when the bucket already holds `max` live connections. */
  async acquire(bucket: string, connection: string, max: number): Promise<boolean> {
    const now = this.clock.now();
    const key = bucketKey(bucket);
    await this.state.indexRemoveRange(key, 0, now);
    if ((await this.state.indexAddBounded(key, connection, now + this.ttlMs, max)) === 'full') return false;
    await this.state.indexAdd(ALL, connection, now + this.ttlMs);
    return true;
  }

  /** Pushes the leases of this replica's connections forward (every third of the TTL). */
  async renew(held: ReadonlyMap<string, string>): Promise<void> {
    const until = this.clock.now() + this.ttlMs;
    await Promise.all(
      [...held].flatMap(([connection, bucket]) => [this.state.indexAdd(bucketKey(bucket), connection, until), this.state.indexAdd(ALL, connection, until)]),
    );
  }

  async release(bucket: string, connection: string): Promise<void> {
    await Promise.all([this.state.indexRemove(bucketKey(bucket), connection), this.state.indexRemove(ALL, connection)]);
  }

  /** Whether any replica has a live stream connection (expired leases are dropped on the way). */
  async anyLive(): Promise<boolean> {
    const now = this.clock.now();
    await this.state.indexRemoveRange(ALL, 0, now);
    return (await this.state.indexCount(ALL, now)) > 0;
  }
}
