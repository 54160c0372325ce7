import { describe, expect, it } from 'vitest';
import { recordHash, rfc3339 } from '../src/record-hash.js';

// Vectors computed independently (Python: json.dumps(sort_keys=True, separators=(',', ':')) + sha256).
const fields = {
  action_id: 'act-1',
  action_type: 'notify',
  id: '01942f1e-7a00-7000-8000-000000000001',
  namespace: 'ns',
  outcome: 'executed',
  provider: 'email',
  tenant: 't1',
  verdict: 'allow',
};

describe('recordHash', () => {
  it('hashes the sorted compact JSON with dispatched_at in to_rfc3339 form', () => {
    expect(recordHash({ ...fields, dispatched_at: '2026-01-01T00:00:00.120Z', previous_hash: null })).toBe(
      '2bcdfdab51d8f94e68a6463e277d2fbac237c9dacb800b5b6d815e6441a13bc1',
    );
    expect(recordHash({ ...fields, dispatched_at: '2026-01-01T00:00:00.000Z', previous_hash: 'ab'.repeat(32) })).toBe(
      '89a87352ab15b205cf7bba0bad5126da56d811ce48ec0aadff186b84ab27aa54',
    );
  });

  it('renders timestamps as chrono does: +00:00, fraction only when not whole seconds', () => {
    expect(rfc3339('2026-01-01T00:00:00.000Z')).toBe('2026-01-01T00:00:00+00:00');
    expect(rfc3339('2026-01-01T00:00:00.5Z')).toBe('2026-01-01T00:00:00.500+00:00');
    expect(rfc3339('2026-01-01T02:00:00.123+02:00')).toBe('2026-01-01T00:00:00.123+00:00');
  });
});
