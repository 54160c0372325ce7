import type { StateStore } from '@sluice/state';

type Method = 'compareAndSwap' | 'indexAddBounded' | 'indexRemoveIf' | 'getVersioned' | 'set';

/**
 * A view of `state` whose next call of `method` first runs `other` (once armed): a
 * deterministic stand-in for another replica's request landing between two steps of ours.
 */
export function racingStore(state: StateStore, method: Method = 'compareAndSwap') {
  let pending: (() => Promise<unknown>) | null = null;
  const store = new Proxy(state, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== 'function') return value;
      const bound = (value as (...args: unknown[]) => unknown).bind(target);
      if (prop !== method) return bound;
      return async (...args: unknown[]) => {
        const other = pending;
        pending = null;
        if (other) await other();
        return bound(...args);
      };
    },
  });
  const beforeNext = (other: () => Promise<unknown>): void => {
    pending = other;
  };
  return { store, beforeNext };
}
