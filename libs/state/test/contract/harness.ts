import { afterEach, beforeEach } from 'vitest';
import type { StateKey, StateStore } from '../../src/state-store.js';

/** What a backend's test file hands the contract: a fresh store per test and its notion of time. */
export interface ContractHarness {
  store: StateStore;
  /** Moves time forward: ManualClock.advance for memory, a real sleep for Redis. */
  advance(ms: number): Promise<void>;
  /** Epoch ms as the store sees it (the ManualClock, or the wall clock for Redis). */
  now(): number;
  /** Deletes what the test wrote and closes the store. */
  cleanup(): Promise<void>;
}

export interface ContractOptions {
  /** Base duration of TTLs and windows; small on Redis, where advance() really sleeps. */
  unitMs: number;
  /** Slack allowed in resetAtMs checks (0 for a manual clock, some ms for server time). */
  toleranceMs: number;
}

export interface ContractContext {
  readonly h: ContractHarness;
  readonly store: StateStore;
  readonly unit: number;
  readonly tol: number;
}

/** Registers per-test setup/teardown and returns live accessors for the current test's harness. */
export function contractContext(makeStore: () => Promise<ContractHarness>, opts: ContractOptions): ContractContext {
  let current: ContractHarness | undefined;
  beforeEach(async () => {
    current = await makeStore();
  });
  afterEach(async () => {
    await current?.cleanup();
    current = undefined;
  });
  const h = (): ContractHarness => {
    if (current === undefined) throw new Error('no store: contract helpers are only valid inside a test');
    return current;
  };
  return {
    get h() {
      return h();
    },
    get store() {
      return h().store;
    },
    unit: opts.unitMs,
    tol: opts.toleranceMs,
  };
}

export function key(kind: string, id: string, namespace = 'ns', tenant = 't1'): StateKey {
  return { kind, namespace, tenant, id };
}

export function expectWithin(actual: number, expected: number, tolerance: number): void {
  if (Math.abs(actual - expected) > tolerance) {
    throw new Error(`expected ${actual} to be within ${tolerance} of ${expected} (off by ${actual - expected})`);
  }
}
