import { setFlagsFromString } from 'node:v8';

const GROWING_FLAG = '--heap-growing-percent';
/**
 * After each full collection V8 lets the old generation grow to a multiple of what survived it,
 * up to 4× when memory is plentiful. A gateway under steady load promotes what it keeps for a
 * while and then drops (audit records the memory backend evicts, dedup keys, sessions): with
 * ~80 MB live, the next full collection came at ~320 MB of heap, and RSS swung between 200 and
 * 400 MB. 1.5× keeps that process near 220 MB for a few more full collections (~10–15 ms each,
 * every ~3 s at 1,800 dispatches/s instead of every ~25 s); docs/operations.md#memory.
 */
const GROWING_PERCENT = 50;

/**
 * Bounds the old generation's growth between full collections, for `serve` and `worker`. V8
 * reads the flag whenever it sets the next limit, so setting it at run time works; an explicit
 * --heap-growing-percent on the command line (or in NODE_OPTIONS, where Node allows it) wins.
 */
export function boundOldGenerationGrowth(): void {
  if (process.execArgv.some((arg) => arg.startsWith(GROWING_FLAG))) return;
  setFlagsFromString(`${GROWING_FLAG}=${GROWING_PERCENT}`);
}
