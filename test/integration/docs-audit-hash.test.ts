import { readFileSync } from 'node:fs';
import { ManualClock } from '@sluice/core';
import { afterEach, describe, expect, it } from 'vitest';
import { runBlock, runnableBlocks } from '../support/doc-examples.js';
import { requestJson, type RunningGateway, startGateway } from '../support/start-gateway.js';

const DOC = readFileSync(new URL('../../docs/audit.md', import.meta.url), 'utf8');
/** docs/audit.md's check of a stored record: recomputes `record_hash` from the canonical form the page describes. */
const HASH_CHECK = runnableBlocks(DOC, 'docs/audit.md').find((b) => b.script.includes('record_hash'));

/**
 * Both shapes of `dispatched_at` in the canonical form: with milliseconds (`….120+00:00`) and
 * without (`.000` dropped), each on a stored record read back over HTTP. docs-runnable.test.ts
 * runs the same block at whatever millisecond the clock shows.
 */
describe.each([
  ['whole seconds: the fraction dropped', Date.UTC(2026, 2, 5, 14, 48, 0, 0), '2026-03-05T14:48:00.000Z'],
  ['milliseconds kept', Date.UTC(2026, 2, 5, 14, 48, 0, 120), '2026-03-05T14:48:00.120Z'],
])('docs/audit.md recomputes record_hash as the page says (%s)', (_name, now, stored) => {
  let gw: RunningGateway | undefined;
  afterEach(async () => {
    await gw?.close();
    gw = undefined;
  });

  it('matches the stored hash, and the chain verifies', async () => {
    expect(HASH_CHECK?.env).toEqual({ SLUICE_COMPLIANCE__HASH_CHAIN: 'true' });
    gw = await startGateway('memory', { compliance: { hash_chain: true } }, { clock: new ManualClock(now) });
    await runBlock(gw.url, HASH_CHECK!);
    const { body } = await requestJson('GET', `${gw.url}/v1/audit?namespace=payments&tenant=acme&limit=1`);
    const [record] = (body as { records: { dispatched_at: string; previous_hash: string | null }[] }).records;
    // The block hashed the second record: a linked one, at the time this case is about.
    expect(record).toMatchObject({ dispatched_at: stored, previous_hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
  });
});
