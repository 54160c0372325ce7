import { auditKeys } from '@sluice/audit';
import type { Clock } from '@sluice/core';
import type { StateStore } from '@sluice/state';
import type { DispatchContext } from '../pipeline/context.js';

/**
 * What the trail must know of an action whose provider call started, should the process die
 * before its record is written: identity and decision, never the payload (an intent is written
 * on every provider call, so it stays small).
 */
export interface ActionIntent {
  id: string;
  namespace: string;
  tenant: string;
  provider: string;
  action_type: string;
  dispatched_at_ms: number;
  verdict: string;
  matched_rule: string | null;
  chain_id: string | null;
  caller_id: string | null;
  caller_method: string | null;
}

/** The index member: a JSON array (positional, so small), written once and removed verbatim. */
function encode(i: ActionIntent): string {
  return JSON.stringify([
    i.id,
    i.namespace,
    i.tenant,
    i.provider,
    i.action_type,
    i.dispatched_at_ms,
    i.verdict,
    i.matched_rule,
    i.chain_id,
    i.caller_id,
    i.caller_method,
  ]);
}

function decode(member: string): ActionIntent | null {
  try {
    const [id, namespace, tenant, provider, action_type, dispatched_at_ms, verdict, matched_rule, chain_id, caller_id, caller_method] = JSON.parse(
      member,
    ) as unknown[];
    if (typeof id !== 'string' || typeof namespace !== 'string' || typeof tenant !== 'string' || typeof dispatched_at_ms !== 'number') return null;
    const text = (v: unknown) => (typeof v === 'string' ? v : null);
    return {
      id,
      namespace,
      tenant,
      provider: text(provider) ?? '',
      action_type: text(action_type) ?? '',
      dispatched_at_ms,
      verdict: text(verdict) ?? 'allow',
      matched_rule: text(matched_rule),
      chain_id: text(chain_id),
      caller_id: text(caller_id),
      caller_method: text(caller_method),
    };
  } catch {
    return null;
  }
}

export interface ActionIntentsOptions {
  state: StateStore;
  clock: Clock;
  /** How long after its provider call started an unsettled intent is given up on: longer than any call with its retries. */
  graceMs: number;
  /** Run before each sweep; false skips it (the records that settle intents may not all be indexed yet). */
  beforeSweep?: () => Promise<boolean>;
}

/**
 * Intent records (docs/audit.md, "Actions in flight"): before a provider call, the action's
 * identity goes into a shared index scored by when to give up on it; the dispatch's audit
 * record removes it when the record is indexed. An intent still there past its due time
 * belongs to a process that died mid-call: the sweeper writes an `unknown` record for it, so the
 * trail shows every action that may have executed. Costs one write before each provider call.
 */
export class ActionIntents {
  constructor(private readonly opts: ActionIntentsOptions) {}

  /** Written before the provider call; the member is what the record's batch removes. */
  async record(ctx: DispatchContext): Promise<string> {
    const now = this.opts.clock.now();
    const member = encode({
      id: ctx.action.id,
      namespace: ctx.action.namespace,
      tenant: ctx.action.tenant,
      provider: ctx.provider,
      action_type: ctx.action.action_type,
      // When the call started: the unknown record's dispatched_at, close enough to the dispatch's own.
      dispatched_at_ms: now,
      verdict: ctx.verdict,
      matched_rule: ctx.matchedRule,
      chain_id: ctx.chainId ?? null,
      caller_id: ctx.caller?.id ?? null,
      caller_method: ctx.caller?.method ?? null,
    });
    const index = auditKeys.intentIndexOf(ctx.action.id, this.opts.state.sharded);
    await this.opts.state.writeBatch([{ op: 'indexAdd', index, member, score: now + this.opts.graceMs }]);
    return member;
  }

  /**
   * Settles intents past their due time, at most `limit`: each is claimed by removing it (one
   * sweeper wins a race), then handed to `settle`; a settle that fails puts it back for the next
   * sweep. Returns how many were settled.
   */
  async sweep(limit: number, settle: (intent: ActionIntent) => Promise<void>): Promise<number> {
    if ((await this.opts.beforeSweep?.()) === false) return 0;
    let settled = 0;
    // One index, or one per shard on a Redis Cluster.
    for (const index of auditKeys.intentIndexes(this.opts.state.sharded)) {
      if (settled >= limit) break;
      const due = await this.opts.state.indexRange(index, { max: this.opts.clock.now(), limit: limit - settled });
      for (const { member, score } of due) {
        if (!(await this.opts.state.indexRemove(index, member))) continue;
        const intent = decode(member);
        if (intent === null) continue;
        try {
          await settle(intent);
          settled++;
        } catch (err) {
          await this.opts.state.indexAdd(index, member, score);
          throw err;
        }
      }
    }
    return settled;
  }
}
