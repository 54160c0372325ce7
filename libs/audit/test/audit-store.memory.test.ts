import { MemoryStateStore } from '@sluice/state';
import { auditStoreContract } from './audit-store.contract.js';

auditStoreContract('memory', async () => {
  const state = new MemoryStateStore();
  return {
    state,
    // One process, one store: a second "connection" is the same store.
    connectAnother: async () => state,
    cleanup: () => state.close(),
  };
});
