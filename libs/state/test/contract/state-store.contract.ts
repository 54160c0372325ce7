import { logContract } from './log.contract.js';
import { describe } from 'vitest';
import { batchContract } from './batch.contract.js';
import { contractContext, type ContractHarness, type ContractOptions } from './harness.js';
import { indexBoundedContract } from './index-bounded.contract.js';
import { indexRangeContract } from './index-range.contract.js';
import { pubsubContract } from './pubsub.contract.js';
import { scanContract } from './scan.contract.js';
import { timeIndexContract } from './time-index.contract.js';
import { valuesContract } from './values.contract.js';
import { versionedContract } from './versioned.contract.js';
import { versionedWithContract } from './versioned-with.contract.js';
import { windowContract } from './window.contract.js';

export type { ContractHarness, ContractOptions } from './harness.js';

/**
 * The StateStore contract: every backend runs exactly these tests. Semantics that differ by
 * backend are not allowed here; Redis internals are asserted only in *.redis.test.ts.
 */
export function stateStoreContract(name: string, makeStore: () => Promise<ContractHarness>, opts: ContractOptions = { unitMs: 1000, toleranceMs: 0 }): void {
  describe(`StateStore contract: ${name}`, () => {
    const ctx = contractContext(makeStore, opts);
    valuesContract(ctx);
    windowContract(ctx);
    versionedContract(ctx);
    versionedWithContract(ctx);
    timeIndexContract(ctx);
    indexRangeContract(ctx);
    indexBoundedContract(ctx);
    batchContract(ctx);
    scanContract(ctx);
    pubsubContract(ctx);
    logContract(ctx);
  });
}
