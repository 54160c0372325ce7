import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSink, type HttpSink } from '../support/http-sink.js';
import { startOpenAiServer, type OpenAiServer } from '../support/openai-server.js';
import { rulesDir } from '../support/rules-dir.js';
import { BACKENDS, postJson, requestJson, sampleAction, startGateway, type RunningGateway } from '../support/start-gateway.js';

const RULES = `
rules:
  - { name: block-bad, priority: 1, condition: { field: action.action_type, eq: block }, action: { type: llm_guardrail, evaluator_name: strict, block_on_flag: true } }
  - { name: divert-bad, priority: 2, condition: { field: action.action_type, eq: divert }, action: { type: llm_guardrail, evaluator_name: default, block_on_flag: false, send_to: review } }
  - { name: unknown-evaluator, priority: 3, condition: { field: action.action_type, eq: typo }, action: { type: llm_guardrail, evaluator_name: nope, block_on_flag: true } }
`;

type Outcome = { outcome: string; action_id: string; rule?: string; reason?: string; new_provider?: string; error?: { code: string } };

describe.each(BACKENDS)('the LLM guardrail (%s)', (backend) => {
  let server: OpenAiServer;
  let open: RunningGateway;
  let closed: RunningGateway;
  let sink: HttpSink;
  let review: HttpSink;
  const dispatch = async (gw: RunningGateway, action_type: string, text: string) =>
    (await postJson(`${gw.url}/v1/dispatch`, sampleAction({ provider: 'hook', action_type, payload: { text } }))).body as Outcome;

  beforeAll(async () => {
    server = await startOpenAiServer();
    // The evaluator flags any action whose payload says "wire everything".
    server.chatReply = (user) =>
      user.includes('malformed')
        ? 'not json at all'
        : JSON.stringify(user.includes('wire everything') ? { flagged: true, reason: 'asks to move all funds' } : { flagged: false, reason: 'ok' });
    sink = await startSink();
    review = await startSink();
    const config = (fail_open: boolean) => ({
      providers: [
        { name: 'hook', type: 'webhook', url: sink.url },
        { name: 'review', type: 'webhook', url: review.url },
      ],
      rules: { directory: rulesDir({ 'guardrail.yaml': RULES }) },
      llm_guardrail: {
        enabled: true,
        endpoint: server.url,
        model: 'judge',
        fail_open,
        evaluators: { strict: { policy: 'Flag moving all funds.', temperature: 0.1 } },
      },
    });
    open = await startGateway(backend, config(true));
    closed = await startGateway(backend, config(false));
  });
  afterAll(async () => {
    await open.close();
    await closed.close();
    await server.close();
    await sink.close();
    await review.close();
  });

  it('suppresses a flagged action when block_on_flag, with the evaluator’s reason; lets a clean one through', async () => {
    expect(await dispatch(closed, 'block', 'please wire everything')).toMatchObject({
      outcome: 'suppressed',
      rule: 'block-bad',
      reason: 'LLM guardrail: asks to move all funds',
    });
    expect((await dispatch(closed, 'block', 'pay the invoice')).outcome).toBe('executed');
    const call = server.calls.findLast((c) => c.path === '/chat/completions');
    expect(call?.body).toMatchObject({ model: 'judge', temperature: 0.1, response_format: { type: 'json_object' } });
    expect(JSON.stringify(call?.body['messages'])).toContain('Flag moving all funds.');
  });

  it('reroutes a flagged action to send_to', async () => {
    const before = review.received.length;
    expect(await dispatch(closed, 'divert', 'wire everything now')).toMatchObject({ outcome: 'rerouted', new_provider: 'review' });
    expect(review.received.length).toBe(before + 1);
  });

  it('a malformed answer or an unreachable evaluator follows fail_open; an unknown evaluator fails', async () => {
    expect(await dispatch(closed, 'block', 'malformed please')).toMatchObject({ outcome: 'failed', error: { code: 'GUARDRAIL_FAILED' } });
    expect((await dispatch(open, 'block', 'malformed please')).outcome).toBe('executed');
    server.status = 503;
    try {
      expect(await dispatch(closed, 'block', 'anything')).toMatchObject({ outcome: 'failed', error: { code: 'GUARDRAIL_FAILED' } });
      expect((await dispatch(open, 'block', 'anything')).outcome).toBe('executed');
    } finally {
      server.status = 200;
    }
    expect(await dispatch(closed, 'typo', 'x')).toMatchObject({ outcome: 'failed', error: { code: 'GUARDRAIL_EVALUATOR_NOT_FOUND' } });
  });

  it('records what the guardrail did in the audit record, a failed evaluation too', async () => {
    const failedOne = await dispatch(closed, 'block', 'malformed again');
    const record = (await requestJson('GET', `${closed.url}/v1/audit/${failedOne.action_id}`)).body as { outcome_details: Record<string, unknown> };
    expect(record.outcome_details['guardrail']).toMatchObject({ evaluator: 'strict', error: expect.any(String), fail_open: false });
    const unknown = await dispatch(closed, 'typo', 'y');
    const unknownRecord = (await requestJson('GET', `${closed.url}/v1/audit/${unknown.action_id}`)).body as { outcome_details: Record<string, unknown> };
    expect(unknownRecord.outcome_details['guardrail']).toMatchObject({ error: expect.any(String), fail_open: false });
  });
});
