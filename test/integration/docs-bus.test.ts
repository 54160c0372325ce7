import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { curlExamples, runExamples } from '../support/doc-examples.js';
import { BACKENDS, startGateway, type RunningGateway } from '../support/start-gateway.js';

const DOC = readFileSync(new URL('../../docs/bus.md', import.meta.url), 'utf8');
const EXAMPLES = curlExamples(DOC);

describe.each(BACKENDS)('docs/bus.md examples, as written (%s)', (backend) => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway(backend, { bus: { enabled: true } });
  });
  afterAll(() => gw.close());

  it('runs every example in order, each answering what the doc says', async () => {
    expect(EXAMPLES.length).toBeGreaterThanOrEqual(9);
    await runExamples(gw.url, EXAMPLES);
  });
});
