import type { StateStore } from '@sluice/state';
import { AUDIT_SHARDS, auditShardOf, ingestLogKey } from '../keys.js';
import type { AuditIngest, IngestEntry } from './ingest.js';
import { LogAuditIngest, type LogIngestOptions } from './log-ingest.js';

/**
 * The log ingest over AUDIT_SHARDS logs, for a sharded state (a Redis Cluster): one log would
 * put every dispatch's append, and every indexer's reads and acknowledgements, on the node of its
 * slot. A record's message goes to the log its action id chooses; each log has its own indexer
 * loop and catch-up; the backlog is the sum of the logs'.
 */
export class ShardedLogIngest implements AuditIngest {
  private readonly shards: LogAuditIngest[];

  constructor(store: StateStore, opts: LogIngestOptions) {
    this.shards = Array.from(
      { length: AUDIT_SHARDS },
      (_, shard) =>
        new LogAuditIngest(store, {
          ...opts,
          log: ingestLogKey(shard),
          // Twelve loops poll: an idle one looks every 100 ms (a record still reaches the indexes well within the second).
          idlePollMs: opts.idlePollMs ?? 100,
        }),
    );
  }

  append(entry: IngestEntry): Promise<void> {
    return this.shardOf(entry.record.action_id).append(entry);
  }

  async backlog(): Promise<number> {
    const lengths = await Promise.all(this.shards.map((s) => s.backlog()));
    return lengths.reduce((a, b) => a + b, 0);
  }

  async catchUp(): Promise<boolean> {
    const done = await Promise.all(this.shards.map((s) => s.catchUp()));
    return done.every(Boolean);
  }

  start(): void {
    for (const s of this.shards) s.start();
  }

  async close(): Promise<void> {
    await Promise.all(this.shards.map((s) => s.close()));
  }

  private shardOf(actionId: string): LogAuditIngest {
    return this.shards[auditShardOf(actionId, true) ?? 0] as LogAuditIngest;
  }
}
