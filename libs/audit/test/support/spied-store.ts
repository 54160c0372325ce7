import type { StateStore, WriteBatchOptions, WriteOp } from '@sluice/state';

export interface SpiedStore {
  store: StateStore;
  /** Each writeBatch call's writes. */
  batches: WriteOp[][];
  indexReads: () => number;
  /** The key kinds of the indexes read. */
  indexKinds: Set<string>;
  keysRead: () => number;
}

/** Counts the store calls a rollup makes. */
export function spied(store: StateStore): SpiedStore {
  const batches: WriteOp[][] = [];
  const indexKinds = new Set<string>();
  let indexReads = 0;
  let keysRead = 0;
  const proxy = new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === 'writeBatch') {
        return async (ops: WriteOp[], opts?: WriteBatchOptions) => {
          batches.push([...ops]);
          return target.writeBatch(ops, opts);
        };
      }
      if (prop === 'indexRange') {
        return async (...args: Parameters<StateStore['indexRange']>) => {
          indexReads++;
          indexKinds.add(args[0].kind);
          return target.indexRange(...args);
        };
      }
      if (prop === 'getMany') {
        return async (keys: Parameters<StateStore['getMany']>[0]) => {
          keysRead += keys.length;
          return target.getMany(keys);
        };
      }
      return Reflect.get(target, prop, receiver) as unknown;
    },
  });
  return { store: proxy, batches, indexReads: () => indexReads, indexKinds, keysRead: () => keysRead };
}
