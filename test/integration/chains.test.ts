import { ManualClock } from '@sluice/core';
import type { Gateway } from '@sluice/gateway';
import type { Job } from '@sluice/state';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentialsFile, keyHeader } from '../support/credentials.js';
import { startSink, type HttpSink } from '../support/http-sink.js';
import { poll } from '../support/poll.js';
import { uniquePrefix } from '../support/redis-url.js';
import { rulesDir } from '../support/rules-dir.js';
import { ALL_BACKENDS, postJson, requestJson, sampleAction, startGateway, type RunningGateway } from '../support/start-gateway.js';

type Body = Record<string, unknown>;
type Step = {
  name: string;
  status: string;
  response_body: unknown;
  child_chain_id: string | null;
  action_id: string | null;
  completed_at: string | null;
  error: { code: string; message: string } | null;
};
type Run = Body & { status: string; steps: Step[]; execution_path: string[]; child_chain_ids: string[]; failure_reason: string | null };

const step = (name: string, provider: string, extra: Body = {}) => ({ name, provider, action_type: `do_${name}`, ...extra });
const DEFINITIONS = [
  { name: 'three', steps: [step('one', 'a'), step('two', 'b'), step('three', 'c')] },
  { name: 'aborting', steps: [step('one', 'a'), step('breaks', 'bad'), step('never', 'c')] },
  { name: 'skipping', on_failure: 'skip', steps: [step('one', 'a'), step('breaks', 'bad'), step('after', 'c')] },
  { name: 'dead-lettering', steps: [step('one', 'a'), step('breaks', 'bad', { on_failure: 'dlq' }), step('never', 'c')] },
  { name: 'child', steps: [step('c1', 'b'), step('c2', 'b')] },
  { name: 'parent', steps: [step('p1', 'a'), { name: 'sub', sub_chain: 'child' }, step('p3', 'c')] },
  { name: 'slow-child', steps: [step('k1', 'b'), step('k2', 'b', { delay_seconds: 3600 })] },
  { name: 'slow-parent', steps: [step('s1', 'a'), { name: 'sub', sub_chain: 'slow-child' }, step('s3', 'c')] },
  { name: 'hurried', timeout_seconds: 1, steps: [step('h1', 'a'), step('h2', 'c', { delay_seconds: 3600 })] },
  // A step that waits an hour: its job is run by hand, as a worker would run it after its tries.
  { name: 'held', steps: [step('x1', 'a'), step('x2', 'c', { delay_seconds: 3600, on_failure: 'dlq' }), step('x3', 'c')] },
  { name: 'held-skipping', on_failure: 'skip', steps: [step('y1', 'a', { delay_seconds: 3600 }), step('y2', 'c')] },
  { name: 'deep-answer', steps: [step('d1', 'deep'), step('d2', 'c')] },
  { name: 'growing', steps: [step('g1', 'big'), step('g2', 'big'), step('g3', 'big'), step('g4', 'c')] },
];
/** What the `deep` provider answers: JSON nested far past server.max_json_depth (JSON.stringify of its value overflows the stack). */
const DEEP = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
/** chains.max_output_bytes in these tests: two of the `big` provider's answers fit, a third does not. */
const MAX_OUTPUT_BYTES = 262_144;
/** One rule per chain: an action whose action_type is a chain's name starts that chain. */
const chainRules = (...names: string[]) =>
  rulesDir({
    'chains.yaml': `rules:\n${names.map((n, i) => `  - { name: start-${n}, priority: ${i + 1}, condition: { field: action.action_type, eq: ${n} }, action: { type: chain, chain_name: ${n} } }`).join('\n')}\n`,
  });

describe.each(ALL_BACKENDS)('chains (%s)', (backend) => {
  let gw: RunningGateway;
  const sinks: Record<'a' | 'b' | 'c' | 'bad' | 'deep' | 'big', HttpSink> = {} as never;
  const url = (path: string) => `${gw.url}${path}`;
  const start = async (chain: string, tenant = 'acme', payload: Body = { order: 42 }) => {
    const res = await postJson(url('/v1/dispatch'), sampleAction({ tenant, action_type: chain, provider: 'a', payload }));
    expect(res.status).toBe(200);
    return res.body as Body & { chain_id: string; action_id: string };
  };
  const run = async (id: string) => (await requestJson('GET', url(`/v1/chains/${id}`))).body as Run;
  const ended = (id: string) =>
    poll(
      `chain ${id} ended`,
      () => run(id),
      (r) => r.status !== 'running',
      { timeoutMs: 20_000, intervalMs: 25 },
    );
  const callsOf = (sink: HttpSink, chainId: string) => sink.received.filter((c) => c.metadata['chain_id'] === chainId);

  beforeAll(async () => {
    for (const name of ['a', 'b', 'c', 'bad', 'deep', 'big'] as const) sinks[name] = await startSink();
    sinks.bad.status = 400;
    sinks.deep.rawReply = () => DEEP;
    sinks.big.reply = () => ({ text: 'x'.repeat(100_000) });
    // Each sink answers with what it saw, so a step's output can be traced into the next step's payload.
    for (const name of ['a', 'b', 'c'] as const) sinks[name].reply = (call) => ({ from: name, step: (call.payload['chain'] as Body)['step'] });
    gw = await startGateway(backend, {
      providers: (['a', 'b', 'c', 'bad', 'deep', 'big'] as const).map((name) => ({ name, type: 'webhook', url: sinks[name].url })),
      executor: { max_retries: 0, dlq_enabled: true },
      chains: { definitions: DEFINITIONS, max_output_bytes: MAX_OUTPUT_BYTES },
      rules: { directory: chainRules(...DEFINITIONS.map((d) => d.name)) },
    });
  });
  afterAll(async () => {
    await gw.close();
    for (const sink of Object.values(sinks)) await sink.close();
  });

  it('runs a three-step chain in order, each step getting the one before’s output', async () => {
    const events: Body[] = [];
    const off = gw.runtime.events.on((e) => {
      if (e.type === 'chain_advanced') events.push(e.data);
    });
    const started = await start('three');
    expect(started).toMatchObject({ outcome: 'chain_started', chain_name: 'three', total_steps: 3, first_step: 'one' });
    const done = await ended(started.chain_id);
    expect(done.status).toBe('completed');
    expect(done.execution_path).toEqual(['one', 'two', 'three']);
    expect(done.steps.map((s) => [s.name, s.status])).toEqual([
      ['one', 'completed'],
      ['two', 'completed'],
      ['three', 'completed'],
    ]);
    expect(done.steps[1]?.response_body).toEqual({ from: 'b', step: 'two' });
    off();
    expect(events.filter((e) => e.chain_id === started.chain_id)).toEqual([
      expect.objectContaining({ step: 'one', step_index: 0, step_status: 'completed', chain_status: 'running', next_step: 'two' }),
      expect.objectContaining({ step: 'two', step_status: 'completed', next_step: 'three' }),
      expect.objectContaining({ step: 'three', step_status: 'completed', chain_status: 'completed', next_step: null }),
    ]);

    const [one] = callsOf(sinks.a, started.chain_id);
    const [two] = callsOf(sinks.b, started.chain_id);
    const [three] = callsOf(sinks.c, started.chain_id);
    expect(one?.payload).toMatchObject({ order: 42, chain: { step: 'one', step_index: 0, previous: null, outputs: {} } });
    expect(two?.payload).toMatchObject({ order: 42, chain: { step: 'two', previous: { from: 'a', step: 'one' } } });
    expect(three?.payload).toMatchObject({
      chain: { step: 'three', previous: { from: 'b', step: 'two' }, outputs: { one: { from: 'a', step: 'one' }, two: { from: 'b', step: 'two' } } },
    });

    // The dispatch and every step are in the audit trail under the run's id.
    const audit = await requestJson('GET', url(`/v1/audit?chain_id=${started.chain_id}&limit=10`));
    const records = (audit.body?.records as Body[] | undefined) ?? [];
    expect(records.map((r) => r.outcome).sort()).toEqual(['chain_started', 'executed', 'executed', 'executed']);
    expect(new Set(records.map((r) => r.action_id))).toEqual(new Set([started.action_id, ...done.steps.map((s) => s.action_id)]));
  });

  it('on_failure abort stops the run at the failed step', async () => {
    const { chain_id } = await start('aborting');
    const done = await ended(chain_id);
    expect(done).toMatchObject({ status: 'failed', execution_path: ['one', 'breaks'] });
    expect(done.steps.map((s) => s.status)).toEqual(['completed', 'failed', 'skipped']);
    expect(done.failure_reason).toMatch(/step breaks failed/);
    expect(callsOf(sinks.c, chain_id)).toHaveLength(0);
  });

  it('on_failure skip goes on after the failed step', async () => {
    const { chain_id } = await start('skipping');
    const done = await ended(chain_id);
    expect(done).toMatchObject({ status: 'completed', execution_path: ['one', 'breaks', 'after'] });
    expect(done.steps.map((s) => s.status)).toEqual(['completed', 'failed', 'completed']);
    // The failed step gave nothing: the step after it gets the last completed step's output.
    expect(callsOf(sinks.c, chain_id)[0]?.payload).toMatchObject({ chain: { previous: { from: 'a', step: 'one' } } });
  });

  it('on_failure dlq puts the failed step in the dead-letter queue and stops the run', async () => {
    const { chain_id } = await start('dead-lettering', 'dlq-tenant');
    const done = await ended(chain_id);
    expect(done.status).toBe('failed');
    const dlq = await requestJson('GET', url('/v1/dlq?tenant=dlq-tenant'));
    const entries = (dlq.body?.entries as Body[] | undefined) ?? [];
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ provider: 'bad', action_type: 'do_breaks', action_id: done.steps[1]?.action_id });
    expect(callsOf(sinks.c, chain_id)).toHaveLength(0);
  });

  it('a step whose provider answers JSON nested past server.max_json_depth completes once, with the answer as text', async () => {
    const { chain_id } = await start('deep-answer');
    const done = await ended(chain_id);
    expect(done.status).toBe('completed');
    expect(done.steps[0]?.response_body).toBe(DEEP);
    expect(callsOf(sinks.deep, chain_id)).toHaveLength(1);
    expect(callsOf(sinks.c, chain_id)[0]?.payload).toMatchObject({ chain: { previous: DEEP } });
  });

  it('a step whose answer would take the outputs the run keeps past chains.max_output_bytes fails (OUTPUT_TOO_LARGE), called once', async () => {
    const { chain_id } = await start('growing');
    const done = await ended(chain_id);
    expect(done).toMatchObject({ status: 'failed', execution_path: ['g1', 'g2', 'g3'] });
    expect(done.steps.map((s) => s.status)).toEqual(['completed', 'completed', 'failed', 'skipped']);
    expect(done.steps[2]?.error).toMatchObject({ code: 'OUTPUT_TOO_LARGE', message: expect.stringContaining(`chains.max_output_bytes (${MAX_OUTPUT_BYTES})`) });
    expect(callsOf(sinks.big, chain_id)).toHaveLength(3);
    // The third call carried the two outputs kept: every later step's payload holds them all.
    const third = callsOf(sinks.big, chain_id)[2]?.payload['chain'] as { outputs: Body } | undefined;
    expect(Object.keys(third?.outputs ?? {})).toEqual(['g1', 'g2']);
    expect(callsOf(sinks.c, chain_id)).toHaveLength(0);
  });

  it('a step job out of tries fails its step (on_failure applies) instead of leaving the run running', async () => {
    const { chain_id } = await start('held', 'out-of-tries');
    await poll(
      'x1 to complete',
      () => run(chain_id),
      (r) => r.steps[0]?.status === 'completed',
    );
    const stepJob = gw.runtime.jobs['chain-step'];
    if (!stepJob) throw new Error('no chain-step job kind');
    const job = (over: Partial<Job>): Job => ({
      id: 'by-hand',
      kind: 'chain-step',
      data: { namespace: 'payments', tenant: 'out-of-tries', chain_id, step: 1 },
      attempt: 4,
      lastTry: false,
      workerDeaths: 0,
      ...over,
    });
    const throwing = { gateway: { dispatch: () => Promise.reject(new Error('state backend away')) } as unknown as Gateway };
    // Not the last try: the error goes back to the scheduler, which retries; the step is claimed.
    await expect(stepJob.handler(job({}), throwing)).rejects.toThrow('state backend away');
    expect((await run(chain_id)).steps[1]?.status).toBe('running');
    // Its workers died as often as the scheduler tolerates: the step fails without being run again.
    await stepJob.handler(job({ workerDeaths: 3 }), throwing);
    const failed = await run(chain_id);
    expect(failed).toMatchObject({ status: 'failed', execution_path: ['x1', 'x2'] });
    expect(failed.steps.map((s) => s.status)).toEqual(['completed', 'failed', 'skipped']);
    expect(failed.steps[1]).toMatchObject({ error: { code: 'WORKER_DIED' } });
    expect(callsOf(sinks.c, chain_id)).toHaveLength(0);
    // on_failure dlq: the step's action is queued, to be retried once whatever killed the workers is fixed.
    const dlq = await requestJson('GET', url('/v1/dlq?tenant=out-of-tries'));
    expect(dlq.body?.entries).toEqual([expect.objectContaining({ provider: 'c', action_type: 'do_x2', action_id: failed.steps[1]?.action_id })]);
    // A job delivered again after that changes nothing.
    await stepJob.handler(job({ workerDeaths: 3 }), throwing);
    expect(await run(chain_id)).toEqual(failed);

    // The last try throwing: the step fails, and on_failure skip goes on to the next step.
    const skipping = await start('held-skipping', 'out-of-tries');
    await expect(
      stepJob.handler(job({ data: { namespace: 'payments', tenant: 'out-of-tries', chain_id: skipping.chain_id, step: 0 }, lastTry: true }), throwing),
    ).resolves.toBeUndefined();
    const done = await ended(skipping.chain_id);
    expect(done).toMatchObject({ status: 'completed', execution_path: ['y1', 'y2'] });
    expect(done.steps[0]).toMatchObject({ status: 'failed', error: { code: 'STEP_JOB_FAILED' } });
  });

  it('a sub-chain runs to completion before the parent resumes', async () => {
    const { chain_id } = await start('parent');
    const done = await ended(chain_id);
    expect(done).toMatchObject({ status: 'completed', execution_path: ['p1', 'sub', 'p3'] });
    const childId = done.steps[1]?.child_chain_id as string;
    expect(done.child_chain_ids).toEqual([childId]);
    const child = await run(childId);
    expect(child).toMatchObject({ status: 'completed', parent_chain_id: chain_id, execution_path: ['c1', 'c2'] });
    // Order across sinks: both child steps were received before the parent's last step was even called.
    const c2 = sinks.b.received.findIndex((c) => c.metadata['chain_id'] === childId && (c.payload['chain'] as Body)['step'] === 'c2');
    expect(c2).toBeGreaterThanOrEqual(0);
    expect(Date.parse(child.finished_at as string)).toBeLessThanOrEqual(Date.parse(done.steps[2]?.completed_at as string));
    // The child starts from the parent's previous output; the sub-chain step's output is the child's last step's.
    expect(callsOf(sinks.b, childId)[0]?.payload).toMatchObject({ chain: { chain_id: childId, previous: { from: 'a', step: 'p1' } } });
    expect(done.steps[1]?.response_body).toEqual({ from: 'b', step: 'c2' });
    expect(callsOf(sinks.c, chain_id)[0]?.payload).toMatchObject({ chain: { previous: { from: 'b', step: 'c2' } } });

    const dag = (await requestJson('GET', url(`/v1/chains/${chain_id}/dag`))).body as Body & { nodes: Body[]; edges: Body[] };
    expect(dag).toMatchObject({ chain_id, status: 'completed', execution_path: ['p1', 'sub', 'p3'] });
    expect(dag.edges.every((e) => e.on_execution_path === true)).toBe(true);
    expect(dag.nodes[1]).toMatchObject({ node_type: 'sub_chain', child_chain_id: childId, children: { chain_id: childId, execution_path: ['c1', 'c2'] } });
  });

  it('cancelling a parent mid-run cancels its sub-chain run: no later step of either runs', async () => {
    const { chain_id } = await start('slow-parent');
    const waiting = await poll(
      'the child waiting for its delayed step',
      () => run(chain_id),
      (r) => r.steps[1]?.status === 'waiting_sub_chain',
      { timeoutMs: 20_000, intervalMs: 25 },
    );
    const childId = waiting.steps[1]?.child_chain_id as string;
    await poll(
      'k1 done',
      () => run(childId),
      (r) => r.steps[0]?.status === 'completed',
      { timeoutMs: 20_000, intervalMs: 25 },
    );

    const cancelled = await postJson(url(`/v1/chains/${chain_id}/cancel`), { reason: 'operator said so' });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ status: 'cancelled', cancel_reason: 'operator said so' });
    const child = await run(childId);
    expect(child.status).toBe('cancelled');
    expect(child.steps.map((s) => s.status)).toEqual(['completed', 'cancelled']);
    expect((await postJson(url(`/v1/chains/${chain_id}/cancel`), {})).status).toBe(409);
    const listed = (await requestJson('GET', url('/v1/chains?status=cancelled&tenant=acme'))).body as { chains: Body[] };
    expect(listed.chains.map((c) => c.chain_id)).toEqual(expect.arrayContaining([chain_id, childId]));
    expect(callsOf(sinks.b, childId)).toHaveLength(1);
    expect(callsOf(sinks.c, chain_id)).toHaveLength(0);
  });

  it('lists runs newest first, a page at a time with the count, of one tenant or of all, as filtered lists do', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await start('three', 'listing')).chain_id);
    for (const id of ids) await ended(id); // statuses that hold still while the lists are compared
    type List = { chains: Body[]; count: number };
    const list = async (query: string) => (await requestJson('GET', url(`/v1/chains?${query}`))).body as List;
    const first = await list('namespace=payments&tenant=listing&limit=2');
    expect(first).toEqual({ chains: [expect.objectContaining({ chain_id: ids[2] }), expect.objectContaining({ chain_id: ids[1] })], count: 3 });
    expect((await list('namespace=payments&tenant=listing&limit=2&offset=2')).chains.map((c) => c.chain_id)).toEqual([ids[0]]);
    // Every tenant's runs, read from the listing index, are what the lists filtered by status add up to.
    const all = await list('limit=1000');
    const byStatus = await Promise.all(['running', 'completed', 'failed', 'cancelled'].map((status) => list(`status=${status}&limit=1000`)));
    expect(all.count).toBe(byStatus.reduce((n, l) => n + l.count, 0));
    expect(all.chains.map((c) => c.chain_id).sort()).toEqual(byStatus.flatMap((l) => l.chains.map((c) => c.chain_id)).sort());
    expect(all.chains[0]?.chain_id).toBe(ids[2]);
  });

  it('timeout_seconds fails a run still going when it passes', async () => {
    const { chain_id } = await start('hurried');
    const done = await ended(chain_id);
    expect(done).toMatchObject({ status: 'failed', execution_path: ['h1'] });
    expect(done.failure_reason).toMatch(/timed out/);
    expect(done.steps.map((s) => s.status)).toEqual(['completed', 'skipped']);
  });

  it('the retention reaper deletes finished runs older than state_ttl_seconds, never running ones', async () => {
    const finished = (await start('three', 'reaped')).chain_id;
    await ended(finished);
    const running = (await start('slow-parent', 'reaped')).chain_id;
    expect((await postJson(url('/v1/retention'), { namespace: 'payments', tenant: 'reaped', state_ttl_seconds: 1 })).status).toBe(201);
    await new Promise((r) => setTimeout(r, 1100));
    await gw.runtime.reaper.runCycle();
    expect((await requestJson('GET', url(`/v1/chains/${finished}`))).status).toBe(404);
    expect((await run(running)).status).toBe('running');
  });

  it('answers 404 for an unknown run and 400 for a bad list filter', async () => {
    expect((await requestJson('GET', url('/v1/chains/no-such-run'))).status).toBe(404);
    expect((await requestJson('GET', url('/v1/chains?status=sleeping'))).status).toBe(400);
    expect((await postJson(url('/v1/chains/no-such-run/cancel'), {})).status).toBe(404);
  });
});

describe('chains: delay_seconds runs on the gateway clock (memory)', () => {
  it('holds a delayed step until the clock passes its delay', async () => {
    const clock = new ManualClock(Date.UTC(2026, 5, 1));
    const sink = await startSink();
    const gw = await startGateway(
      'memory',
      {
        providers: [{ name: 'hook', type: 'webhook', url: sink.url }],
        chains: { definitions: [{ name: 'later', steps: [step('now', 'hook'), step('later', 'hook', { delay_seconds: 300 })] }] },
        rules: { directory: chainRules('later') },
      },
      { clock },
    );
    try {
      const res = await postJson(`${gw.url}/v1/dispatch`, sampleAction({ action_type: 'later', provider: 'hook' }));
      const chainId = (res.body as { chain_id: string }).chain_id;
      await clock.advanceAsync(0);
      await poll('the first step', () => sink.received.length === 1, { timeoutMs: 5000, intervalMs: 10 });
      const run = () => requestJson('GET', `${gw.url}/v1/chains/${chainId}`).then((r) => r.body as Run);
      await poll('the first step recorded', run, (r) => r.current_step === 1, { timeoutMs: 5000, intervalMs: 10 });
      await clock.advanceAsync(299_000);
      await new Promise((r) => setTimeout(r, 200));
      expect(sink.received).toHaveLength(1);
      await clock.advanceAsync(1000);
      await poll('the delayed step', () => sink.received.length === 2, { timeoutMs: 5000, intervalMs: 10 });
      expect((await poll('completed', run, (r) => r.status === 'completed', { timeoutMs: 5000, intervalMs: 10 })).execution_path).toEqual(['now', 'later']);
    } finally {
      await gw.close();
      await sink.close();
    }
  });
});

describe('chains: a run keeps its sub-chains as they were when it started (memory)', () => {
  it('runs the sub-chain it started with, although the definition was replaced meanwhile', async () => {
    const clock = new ManualClock(Date.UTC(2026, 5, 1));
    const sink = await startSink();
    const gw = await startGateway(
      'memory',
      { providers: [{ name: 'hook', type: 'webhook', url: sink.url }], rules: { directory: chainRules('mom') } },
      { clock },
    );
    try {
      const put = (name: string, steps: unknown[]) => requestJson('PUT', `${gw.url}/v1/chains/definitions/${name}`, { name, steps });
      expect((await put('kid', [step('old', 'hook')])).status).toBe(201);
      expect((await put('mom', [step('m1', 'hook', { delay_seconds: 300 }), { name: 'sub', sub_chain: 'kid' }])).status).toBe(201);
      const res = await postJson(`${gw.url}/v1/dispatch`, sampleAction({ action_type: 'mom', provider: 'hook' }));
      const chainId = (res.body as { chain_id: string }).chain_id;
      expect((await put('kid', [step('new', 'hook')])).status).toBe(200);
      await clock.advanceAsync(300_000);
      // Each step's job is due at once on the gateway clock: let it fire between reads.
      const run = async () => {
        await clock.advanceAsync(0);
        return requestJson('GET', `${gw.url}/v1/chains/${chainId}`).then((r) => r.body as Run);
      };
      await poll('completed', run, (r) => r.status === 'completed', { timeoutMs: 5000, intervalMs: 10 });
      expect(sink.received.map((c) => c.metadata['chain_step'])).toEqual(['m1', 'old']);
    } finally {
      await gw.close();
      await sink.close();
    }
  });
});

describe.each(ALL_BACKENDS)('chain runs and grants (%s)', (backend) => {
  let gw: RunningGateway;
  let sink: HttpSink;
  const acme = { tenants: ['acme'], namespaces: ['payments'], actions: ['*'] };
  const startAs = async (caller: string, tenant: string) =>
    (
      (await postJson(`${gw.url}/v1/dispatch`, sampleAction({ tenant, action_type: 'parked', provider: 'hook' }), keyHeader(caller))).body as {
        chain_id: string;
      }
    ).chain_id;

  beforeAll(async () => {
    sink = await startSink();
    const { file } = credentialsFile({
      keys: [
        { name: 'root', role: 'admin', grants: [{ tenants: ['*'], namespaces: ['*'], actions: ['*'] }] },
        { name: 'acme-op', role: 'operator', grants: [acme] },
        { name: 'acme-viewer', role: 'viewer', grants: [acme] },
        { name: 'acme-mail-op', role: 'operator', grants: [{ ...acme, providers: ['mail'] }] },
      ],
    });
    gw = await startGateway(backend, {
      auth: { enabled: true, file },
      providers: [{ name: 'hook', type: 'webhook', url: sink.url }],
      chains: { definitions: [{ name: 'parked', steps: [step('one', 'hook', { delay_seconds: 3600 })] }] },
      rules: { directory: chainRules('parked') },
    });
  });
  afterAll(async () => {
    await gw.close();
    await sink.close();
  });

  it('a tenant-scoped key sees and cancels only its tenant’s runs (others are 404); a viewer cannot cancel', async () => {
    const mine = await startAs('acme-op', 'acme');
    const theirs = await startAs('root', 'globex');
    const listed = (await requestJson('GET', `${gw.url}/v1/chains`, undefined, keyHeader('acme-viewer'))).body as { chains: Body[] };
    expect(listed.chains.map((c) => c.chain_id)).toEqual([mine]);
    expect((await requestJson('GET', `${gw.url}/v1/chains?tenant=globex`, undefined, keyHeader('acme-viewer'))).status).toBe(403);
    // Another tenant's run is not found (a 403 would say it exists there).
    expect((await requestJson('GET', `${gw.url}/v1/chains/${theirs}`, undefined, keyHeader('acme-viewer'))).status).toBe(404);
    expect((await requestJson('GET', `${gw.url}/v1/chains/${theirs}/dag`, undefined, keyHeader('acme-viewer'))).status).toBe(404);
    expect((await postJson(`${gw.url}/v1/chains/${theirs}/cancel`, {}, keyHeader('acme-op'))).status).toBe(404);
    expect((await postJson(`${gw.url}/v1/chains/${mine}/cancel`, {}, keyHeader('acme-viewer'))).status).toBe(403);
    // The run records who cancelled it: another name is refused, and nothing is cancelled.
    const spoofed = await postJson(`${gw.url}/v1/chains/${mine}/cancel`, { cancelled_by: 'root' }, keyHeader('acme-op'));
    expect(spoofed).toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED', details: [{ path: 'cancelled_by' }] } });
    expect((await requestJson('GET', `${gw.url}/v1/chains/${mine}`, undefined, keyHeader('acme-op'))).body).toMatchObject({ status: 'running' });
    const cancelled = await postJson(`${gw.url}/v1/chains/${mine}/cancel`, { cancelled_by: 'acme-op' }, keyHeader('acme-op'));
    expect(cancelled).toMatchObject({ status: 200, body: { status: 'cancelled', cancelled_by: 'acme-op' } });
    expect((await requestJson('GET', `${gw.url}/v1/chains/${theirs}`, undefined, keyHeader('root'))).body).toMatchObject({ status: 'running' });
  });

  it('a key whose grant misses the starting action’s provider finds no run by id (its steps hold that payload), nor cancels it', async () => {
    const run = await startAs('acme-op', 'acme');
    const mailOp = keyHeader('acme-mail-op');
    for (const path of [run, `${run}/dag`]) {
      expect(await requestJson('GET', `${gw.url}/v1/chains/${path}`, undefined, mailOp)).toMatchObject({ status: 404, body: { code: 'NOT_FOUND' } });
    }
    expect(await postJson(`${gw.url}/v1/chains/${run}/cancel`, {}, mailOp)).toMatchObject({ status: 404, body: { code: 'NOT_FOUND' } });
    // Nor does its list show the run (a summary would still name the chain and its scope).
    const listed = (await requestJson('GET', `${gw.url}/v1/chains`, undefined, mailOp)).body as { chains: Body[] };
    expect(listed.chains.map((c) => c.chain_id)).not.toContain(run);
    expect((await requestJson('GET', `${gw.url}/v1/chains/${run}`, undefined, keyHeader('acme-op'))).body).toMatchObject({ status: 'running' });
  });
});

describe('chain definitions written at once on two replicas (redis)', () => {
  it('never leave a sub-chain cycle stored: of two writes closing one, at least one is refused and undone', async () => {
    const config = { providers: [{ name: 'ok', type: 'noop' }], rules: { directory: null }, state: { prefix: uniquePrefix() } };
    const a = await startGateway('redis', config);
    const b = await startGateway('redis', config);
    try {
      const put = (gw: RunningGateway, name: string, sub?: string) =>
        requestJson('PUT', `${gw.url}/v1/chains/definitions/${name}`, {
          name,
          steps: [{ name: 'a', provider: 'ok', action_type: 'x' }, ...(sub ? [{ name: 's', sub_chain: sub }] : [])],
        });
      for (let round = 0; round < 10; round++) {
        const [x, y] = [`ca${round}`, `cb${round}`];
        await put(a, x);
        await put(a, y);
        const answers = await Promise.all([put(a, x, y), put(b, y, x)]);
        expect(answers.filter((r) => r.status === 200).length).toBeLessThanOrEqual(1);
        const subOf = async (name: string) =>
          ((await requestJson('GET', `${a.url}/v1/chains/definitions/${name}`)).body as { steps: { sub_chain?: string }[] }).steps.find((s) => s.sub_chain)
            ?.sub_chain;
        const [xs, ys] = [await subOf(x), await subOf(y)];
        expect(xs === y && ys === x, `round ${round}: ${x} → ${xs}, ${y} → ${ys}`).toBe(false);
      }
    } finally {
      await a.close();
      await b.close();
    }
  });
});
