import { MemoryStateStore } from '../../src/memory/memory-state-store.js';
import { recordRepositoryContract } from './records.contract.js';

// One process: both "replicas" share the one in-memory store, as API and worker do in `sluice serve`.
recordRepositoryContract('memory', async () => {
  const store = new MemoryStateStore();
  return { stores: [store, store], cleanup: () => store.close() };
});
