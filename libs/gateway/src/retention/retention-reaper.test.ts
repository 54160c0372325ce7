import { ManualClock, RetentionCreateInput } from '@sluice/core';
import { MemoryStateStore } from '@sluice/state';
import { Metrics, createLogger } from '@sluice/telemetry';
import { afterEach, describe, expect, it } from 'vitest';
import { RetentionReaper } from './retention-reaper.js';
import { RetentionRepository } from './retention-repository.js';
import type { AuditExpiry, ReapContext, ReapResult, RetentionSource } from './retention-source.js';

const logger = createLogger({ level: 'silent', role: 'test' });
const input = (tenant: string, over: Record<string, unknown> = {}) => RetentionCreateInput.parse({ namespace: 'ns', tenant, ...over });

/** A source that records which tenants it was asked to reap and deletes `perCall` each time. */
class FakeSource implements RetentionSource {
  readonly seen: ReapContext[] = [];
  constructor(
    readonly name: string,
    private readonly behaviour: (ctx: ReapContext) => ReapResult = () => ({ deleted: 2, skippedCompliance: 0, errors: 0 }),
  ) {}
  async reap(ctx: ReapContext): Promise<ReapResult> {
    this.seen.push(ctx);
    return this.behaviour(ctx);
  }
  tenants(): string[] {
    return this.seen.map((c) => c.policy.tenant).sort();
  }
}

/** An audit store with `backlog` expired records, deleted `limit` at a time. */
function fakeAudit(backlog: number): AuditExpiry & { calls: number[] } {
  let left = backlog;
  const calls: number[] = [];
  return {
    calls,
    async expire(_nowMs, limit) {
      const n = Math.min(left, limit);
      left -= n;
      calls.push(n);
      return n;
    },
  };
}

describe('RetentionReaper', () => {
  const clock = new ManualClock(Date.UTC(2026, 2, 5, 14, 30));
  const repos: RetentionRepository[] = [];
  const setup = async () => {
    const state = new MemoryStateStore({ clock });
    const retention = new RetentionRepository({ state, clock, logger, syncIntervalMs: 60_000 });
    await retention.start();
    repos.push(retention);
    const metrics = new Metrics({ defaultMetrics: false });
    return { state, retention, metrics };
  };
  afterEach(async () => {
    await Promise.all(repos.splice(0).map((r) => r.close()));
  });

  it('runs every source for enabled policies only, skipping disabled ones and counting held ones', async () => {
    const { retention, metrics } = await setup();
    await retention.create(input('active', { state_ttl_seconds: 60 }));
    await retention.create(input('held', { compliance_hold: true, state_ttl_seconds: 60 }));
    const off = await retention.create(input('off', { state_ttl_seconds: 60 }));
    await retention.update(off.id, { enabled: false });
    const chains = new FakeSource('chains');
    const events = new FakeSource('events', () => ({ deleted: 1, skippedCompliance: 1, errors: 0 }));
    const reaper = new RetentionReaper({ retention, clock, logger, metrics, immutableAudit: false, sources: [chains] });
    reaper.register(events);

    const summary = await reaper.runCycle();

    expect(chains.tenants()).toEqual(['active']);
    expect(events.tenants()).toEqual(['active']);
    expect(chains.seen[0]).toMatchObject({ nowMs: clock.now(), policy: { tenant: 'active', state_ttl_seconds: 60 } });
    expect(summary).toEqual({ policies: 1, deleted: 3, skippedCompliance: 2, errors: 0, auditExpired: 0 });
    expect(metrics.retentionSnapshot()).toEqual({ retention_deleted_state: 3, retention_skipped_compliance: 2, retention_errors: 0 });
    const text = await metrics.prometheusText();
    expect(text).toMatch(/sluice_retention_deleted_state_total\{source="chains"\} 2/);
    expect(text).toMatch(/sluice_retention_skipped_compliance_total\{source="policies"\} 1/);
    expect(text).toMatch(/sluice_retention_skipped_compliance_total\{source="events"\} 1/);
  });

  it('reloads the policies first, so a hold placed on another replica is honoured', async () => {
    const { state, retention, metrics } = await setup();
    const p = await retention.create(input('t', { event_ttl_seconds: 60 }));
    // Another replica places a hold; this one missed the broadcast (it never started syncing).
    const other = new RetentionRepository({ state, clock, logger });
    await other.update(p.id, { compliance_hold: true });
    const source = new FakeSource('events');
    const stale = new RetentionRepository({ state, clock, logger });
    const reaper = new RetentionReaper({ retention: stale, clock, logger, metrics, immutableAudit: false, sources: [source] });
    expect(await reaper.runCycle()).toMatchObject({ policies: 0, skippedCompliance: 1 });
    expect(source.seen).toEqual([]);
  });

  it('counts a failing source as an error and carries on with the others', async () => {
    const { retention, metrics } = await setup();
    await retention.create(input('a'));
    await retention.create(input('b'));
    const flaky = new FakeSource('chains', (ctx) => {
      if (ctx.policy.tenant === 'a') throw new Error('boom');
      return { deleted: 1, skippedCompliance: 0, errors: 0 };
    });
    const reaper = new RetentionReaper({ retention, clock, logger, metrics, immutableAudit: false, sources: [flaky] });
    expect(await reaper.runCycle()).toMatchObject({ policies: 2, deleted: 1, errors: 1 });
    expect(metrics.retentionSnapshot().retention_errors).toBe(1);
    expect(await metrics.prometheusText()).toMatch(/sluice_retention_errors_total\{source="chains"\} 1/);
  });

  it('expires audit records in bounded batches until a short one', async () => {
    const { retention, metrics } = await setup();
    const audit = fakeAudit(25);
    const reaper = new RetentionReaper({ retention, clock, logger, metrics, immutableAudit: false, audit, auditBatchSize: 10 });
    expect(await reaper.runCycle()).toMatchObject({ deleted: 25, auditExpired: 25 });
    expect(audit.calls).toEqual([10, 10, 5]);
    expect(await metrics.prometheusText()).toMatch(/sluice_retention_deleted_state_total\{source="audit"\} 25/);
  });

  it('stops audit expiry at the per-cycle cap, and leaves the rest to the next cycle', async () => {
    const { retention, metrics } = await setup();
    const audit = fakeAudit(50);
    const reaper = new RetentionReaper({ retention, clock, logger, metrics, immutableAudit: false, audit, auditBatchSize: 10, maxAuditBatches: 2 });
    expect((await reaper.runCycle()).auditExpired).toBe(20);
    expect((await reaper.runCycle()).auditExpired).toBe(20);
  });

  it('never expires audit records when audit is immutable', async () => {
    const { retention, metrics } = await setup();
    const audit = fakeAudit(5);
    const reaper = new RetentionReaper({ retention, clock, logger, metrics, immutableAudit: true, audit });
    expect((await reaper.runCycle()).auditExpired).toBe(0);
    expect(audit.calls).toEqual([]);
  });

  it('counts an audit expiry failure, keeping what was deleted before it', async () => {
    const { retention, metrics } = await setup();
    let calls = 0;
    const audit: AuditExpiry = {
      async expire() {
        if (++calls > 1) throw new Error('redis gone');
        return 10;
      },
    };
    const reaper = new RetentionReaper({ retention, clock, logger, metrics, immutableAudit: false, audit, auditBatchSize: 10 });
    expect(await reaper.runCycle()).toMatchObject({ auditExpired: 10, errors: 1 });
  });

  it('fails the cycle (and counts it) when the policies cannot be reloaded', async () => {
    const { retention, metrics } = await setup();
    const source = new FakeSource('chains');
    const broken = { current: retention.current, reload: () => Promise.reject(new Error('redis gone')) };
    const reaper = new RetentionReaper({ retention: broken, clock, logger, metrics, immutableAudit: false, sources: [source] });
    await expect(reaper.runCycle()).rejects.toThrow(/redis gone/);
    expect(source.seen).toEqual([]);
    expect(metrics.retentionSnapshot().retention_errors).toBe(1);
  });

  it('refuses two sources with one name, or a reserved one', async () => {
    const { retention, metrics } = await setup();
    const reaper = new RetentionReaper({ retention, clock, logger, metrics, immutableAudit: false, sources: [new FakeSource('chains')] });
    expect(() => reaper.register(new FakeSource('chains'))).toThrow(/taken/);
    expect(() => reaper.register(new FakeSource('audit'))).toThrow(/taken/);
  });
});
