import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { allocationTables, summarizeAllocations, type SamplingHeapProfile } from './alloc-profile.js';
import { REPO_ROOT } from './process-launcher.js';

const gatewayUrl = pathToFileURL(`${REPO_ROOT}libs/audit/dist/ingest/ingest.js`).href;
const libraryUrl = pathToFileURL(`${REPO_ROOT}node_modules/pino/lib/tools.js`).href;

/** (root) → handler (gateway) → asJson (library), each allocating; plus a native frame under the root. */
const profile: SamplingHeapProfile = {
  head: {
    id: 1,
    callFrame: { functionName: '(root)', url: '', lineNumber: -1 },
    children: [
      {
        id: 2,
        callFrame: { functionName: 'indexWritesOf', url: gatewayUrl, lineNumber: 10 },
        children: [{ id: 3, callFrame: { functionName: 'asJson', url: libraryUrl, lineNumber: 121 }, children: [] }],
      },
      { id: 4, callFrame: { functionName: 'assign', url: '', lineNumber: -1 }, children: [] },
    ],
  },
  samples: [
    { nodeId: 2, size: 1000 },
    { nodeId: 3, size: 3000 },
    { nodeId: 3, size: 1000 },
    { nodeId: 4, size: 2000 },
  ],
};

describe('summarizeAllocations', () => {
  it('divides the samples by the dispatches, per allocating function and per nearest gateway frame', () => {
    const s = summarizeAllocations('b', profile, 10);
    expect(s.bytesPerDispatch).toBe(700);
    expect(s.byFunction).toEqual([
      { frame: 'asJson pino/lib/tools.js:122', bytes: 400 },
      { frame: 'assign (native)', bytes: 200 },
      { frame: 'indexWritesOf libs/audit/dist/ingest/ingest.js:11', bytes: 100 },
    ]);
    // The library's allocation counts against the gateway frame that called it; the native one has none above it.
    expect(s.byGatewayFrame).toEqual([
      { frame: 'indexWritesOf libs/audit/dist/ingest/ingest.js:11', bytes: 500 },
      { frame: '(outside the gateway)', bytes: 200 },
    ]);
    expect(allocationTables(s)).toContain('| indexWritesOf libs/audit/dist/ingest/ingest.js:11 | 0.49 |');
  });

  it('keeps the top N of each list', () => {
    expect(summarizeAllocations('b', profile, 1, 1).byFunction).toEqual([{ frame: 'asJson pino/lib/tools.js:122', bytes: 4000 }]);
  });
});
