/**
 * Preloaded into a gateway by `test/bench/alloc-profile.ts` (`--import`): the first SIGUSR2 starts
 * V8's sampling heap profiler, counting objects already collected too (so it measures what a
 * request allocates, not what it keeps); the next one writes the samples to
 * $SLUICE_BENCH_ALLOC_OUT. Plain JavaScript: the gateway runs built code, without tsx.
 */
import { renameSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

const out = process.env.SLUICE_BENCH_ALLOC_OUT;
const session = new Session();
session.connect();
let sampling = false;

process.on('SIGUSR2', () => {
  if (!sampling) {
    sampling = true;
    // One sample per 1 KiB allocated on average: enough for the top allocators of a few thousand requests.
    session.post('HeapProfiler.startSampling', { samplingInterval: 1024, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
    return;
  }
  sampling = false;
  session.post('HeapProfiler.stopSampling', (err, result) => {
    // Written aside and renamed, so the reader polling for the file never sees half of it.
    writeFileSync(`${out}.partial`, JSON.stringify(err ? { error: String(err) } : result.profile));
    renameSync(`${out}.partial`, out);
  });
});
