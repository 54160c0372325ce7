import { deflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { trainDictionary, type BodySample } from '../src/body-dictionary.js';

const sample = (group: string, text: string): BodySample => ({ group, body: Buffer.from(text) });

describe('body dictionary training', () => {
  it('takes the newest body of every group first, the commonest group last, and stays within its size', () => {
    const samples = [
      sample('common', 'C1-old'),
      sample('rare', 'R1'),
      sample('common', 'C2-mid'),
      sample('common', 'C3-new'),
      sample('middle', 'M1'),
      sample('middle', 'M2'),
    ];
    // Room for one body of each group: the newest of each, rarest first.
    expect(trainDictionary(samples, 10).toString()).toBe('R1M2C3-new');
    // Room for everything: older bodies too, oldest first within their group.
    expect(trainDictionary(samples, 1000).toString()).toBe('R1M1M2C1-oldC2-midC3-new');
    // A body larger than the room is left out; nothing fits: empty.
    expect(trainDictionary([sample('a', 'x'.repeat(50)), sample('b', 'yy')], 10).toString()).toBe('yy');
    expect(trainDictionary([sample('a', 'x'.repeat(50))], 10).length).toBe(0);
  });

  it('makes bodies like the sample compress to a fraction of what they do alone', () => {
    const body = (i: number) =>
      JSON.stringify({
        action_payload: { to: `customer-${i}@mail.example.com`, subject: 'Your invoice is ready', template: 'invoice_v2', locale: 'en-GB' },
        verdict_details: { verdict: 'allow' },
        outcome_details: { status: 'success', provider_response: { id: `msg-${i * 7919}` } },
        metadata: { labels: { team: 'billing', env: 'prod' } },
        completed_at: new Date(Date.UTC(2026, 10, 27) + i * 1000).toISOString(),
        duration_ms: 100 + (i % 17),
        auth_method: 'api_key',
      });
    const dictionary = trainDictionary(Array.from({ length: 50 }, (_, i) => sample('email/invoice/executed', body(i))));
    const alone = deflateRawSync(body(1000), { level: 1 }).length;
    const withDictionary = deflateRawSync(body(1000), { level: 1, dictionary }).length;
    expect(withDictionary).toBeLessThan(alone / 2);
  });
});
