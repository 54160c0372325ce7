import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { curlExamples, fencedBlocks, runExamples } from '../support/doc-examples.js';
import { startSink, type HttpSink } from '../support/http-sink.js';
import { poll } from '../support/poll.js';
import { rulesDir } from '../support/rules-dir.js';
import { BACKENDS, requestJson, startGateway, type RunningGateway } from '../support/start-gateway.js';

const DOC = readFileSync(new URL('../../docs/chains.md', import.meta.url), 'utf8');
const [CONFIG_YAML = '', RULES_YAML = ''] = fencedBlocks(DOC, 'yaml');
const CONFIG = parse(CONFIG_YAML) as { providers: { name: string; url: string }[]; chains: unknown };
/** The payload example of "Passing output on": what the last step of `onboard` receives. */
const PAYLOAD_EXAMPLE = fencedBlocks(DOC, 'json')
  .map((b) => b.replace(/"…"/g, '"x"'))
  .map((b) => JSON.parse(b.replace(/^\s+/gm, '')) as Record<string, unknown>)
  .find((b) => 'chain' in b) as { chain: Record<string, unknown> };

describe.each(BACKENDS)('docs/chains.md, as written (%s)', (backend) => {
  let gw: RunningGateway;
  const sinks = new Map<string, HttpSink>();

  beforeAll(async () => {
    // The doc's providers, each pointed at a local sink answering what the payload example shows.
    for (const p of CONFIG.providers) sinks.set(p.name, await startSink());
    (sinks.get('crm') as HttpSink).reply = (call) =>
      (call.payload['chain'] as { step: string }).step === 'create_account' ? { account_id: 'A-17' } : { logged: true };
    (sinks.get('email') as HttpSink).reply = () => ({ sent: true });
    gw = await startGateway(backend, {
      providers: CONFIG.providers.map((p) => ({ ...p, url: sinks.get(p.name)?.url })),
      chains: CONFIG.chains,
      rules: { directory: rulesDir({ 'chains.yaml': RULES_YAML }) },
    });
  });
  afterAll(async () => {
    await gw.close();
    for (const sink of sinks.values()) await sink.close();
  });

  it('runs every example in order; the onboard run completes as the doc describes', async () => {
    const examples = curlExamples(DOC);
    expect(examples.length).toBeGreaterThanOrEqual(7);
    const vars = await runExamples(gw.url, examples);
    const chainId = vars.get('CHAIN') as string;
    const run = await poll(
      'the onboard run',
      async () => (await requestJson('GET', `${gw.url}/v1/chains/${chainId}`)).body as { status: string; execution_path: string[] },
      (r) => r.status !== 'running',
      { timeoutMs: 15_000, intervalMs: 25 },
    );
    expect(run).toMatchObject({ status: 'completed', execution_path: ['create_account', 'welcome', 'record'] });
    const record = (sinks.get('crm') as HttpSink).received.find((c) => c.metadata['chain_id'] === chainId && c.metadata['chain_step'] === 'record');
    const { chain_id: _id, ...documented } = PAYLOAD_EXAMPLE.chain;
    expect(record?.payload).toMatchObject({ email: 'ada@example.com', chain: { ...documented, chain_id: chainId } });
  });
});
