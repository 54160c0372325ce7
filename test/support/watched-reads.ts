import type { StateKey, StateStore } from '@sluice/state';

/** A view of `state` that tells `seen` the key of each versioned read (record reads) before making it. */
export function watchedReads<S extends StateStore>(state: S, seen: (key: StateKey) => void): S {
  return new Proxy(state, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== 'function') return value;
      if (prop !== 'getVersioned') return value.bind(target);
      return (key: StateKey) => {
        seen(key);
        return target.getVersioned(key);
      };
    },
  });
}
