import { setFlagsFromString } from 'node:v8';

const GROWTH_FLAG = '--semi-space-growth-factor';
/** V8's default (Node 20 to 24). */
const DEFAULT_GROWTH = 2;

/**
 * Keeps V8's young generation at its initial size while the process starts; call the returned
 * function once it serves. Start-up allocates tens of MB that nearly all survive (modules, zod
 * schemas, compiled validators), and V8 doubles the young generation each time as much as its
 * size has survived: a just-started server sat on a young generation at its maximum (2 × 16 MB)
 * and nearly empty, ≈ 25 MB of idle RSS. Start-up gains nothing from it (its survivors are
 * promoted anyway). Restoring the default lets it grow under load as before, so throughput is
 * unchanged.
 *
 * V8 reads the factor at each growth, so changing it at run time works; it only refuses a factor
 * below 2 at start-up (on the command line), which is why this is not a node option. An explicit
 * --semi-space-growth-factor (e.g. =2, to opt out) is left alone.
 */
export function holdYoungGeneration(): () => void {
  if (process.execArgv.some((arg) => arg.startsWith(GROWTH_FLAG))) return () => {};
  setFlagsFromString(`${GROWTH_FLAG}=1`);
  return () => setFlagsFromString(`${GROWTH_FLAG}=${DEFAULT_GROWTH}`);
}
