import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { curlExamples, runExamples } from '../support/doc-examples.js';
import { BACKENDS, startGateway, type RunningGateway } from '../support/start-gateway.js';

const DOC = readFileSync(new URL('../../docs/silences.md', import.meta.url), 'utf8');
const EXAMPLES = curlExamples(DOC);

describe.each(BACKENDS)('docs/silences.md examples, as written (%s)', (backend) => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway(backend);
  });
  afterAll(() => gw.close());

  it('has examples for silences and time intervals', () => {
    expect(EXAMPLES.length).toBeGreaterThanOrEqual(8);
    expect(EXAMPLES.some((e) => e.path.startsWith('/v1/time-intervals'))).toBe(true);
  });

  it('runs every example in order, each answering what the doc says', async () => {
    await runExamples(gw.url, EXAMPLES);
  });
});
