import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { curlExamples, runCurl, substitute } from '../support/doc-examples.js';
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
    const vars = new Map<string, string>();
    for (const example of EXAMPLES) {
      const { status, output } = await runCurl(gw.url, example, vars);
      expect(status, example.line).toBeLessThan(300);
      if (example.capture) {
        const value = (JSON.parse(output) as Record<string, unknown>)[example.capture.field];
        expect(typeof value, example.line).toBe('string');
        vars.set(example.capture.variable, value as string);
      }
      if (example.expected === undefined) continue;
      const expected = substitute(example.expected, vars);
      if (expected.startsWith('{')) expect(JSON.parse(output), example.line).toMatchObject(JSON.parse(expected));
      else expect(output.trim(), example.line).toBe(expected);
    }
  });
});
