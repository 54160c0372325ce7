/**
 * Measurement (m) of `npm run bench` (issue 25): the heap a retained in-memory audit record costs,
 * its index entries, action pointer and share of the rollups included. A gateway on the memory
 * backend, in this process, takes dispatches of the bench's action (through inject: the records
 * are what is measured, not HTTP) with the audit caps raised so nothing is evicted; the heap after
 * two full collections, before and after N more records, divided by N. Run as a child with
 * --expose-gc (measureAuditHeap); `node --expose-gc --import tsx test/bench/audit-heap.ts N`
 * prints the JSON alone.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { composeApi } from '@sluice/api';
import { SluiceConfig } from '@sluice/config';
import { Metrics, createLogger } from '@sluice/telemetry';
import { startConsumers } from '@sluice/worker';
import { SAMPLE_ACTION } from './action-body.js';
import { REPO_ROOT } from './process-launcher.js';

export interface AuditHeapResult {
  /** Records measured (after WARM_RECORDS that are not). */
  records: number;
  heapBytesPerRecord: number;
  /** Characters of a stored record's JSON, on average: the data itself. */
  recordChars: number;
}

/** Records dispatched before the first measurement: code warmed, maps and chunk arrays past their first growths. */
const WARM_RECORDS = 5000;
/** Dispatches in flight at once. */
const CONCURRENCY = 100;

async function measureHere(records: number): Promise<AuditHeapResult> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('audit-heap: run node with --expose-gc');
  const config = SluiceConfig.parse({
    state: { backend: 'memory' },
    logging: { level: 'silent' },
    audit: { memory_max_records: 10_000_000, memory_max_bytes: 2 ** 40 },
  });
  const { app, runtime } = await composeApi(config, {
    logger: createLogger({ level: 'silent', role: 'bench' }),
    metrics: new Metrics({ defaultMetrics: false }),
  });
  await startConsumers(runtime);
  const body = JSON.stringify(SAMPLE_ACTION);
  const dispatch = async (count: number) => {
    for (let sent = 0; sent < count; sent += CONCURRENCY) {
      const wave = Array.from({ length: Math.min(CONCURRENCY, count - sent) }, () =>
        app.inject({ method: 'POST', url: '/v1/dispatch', payload: body, headers: { 'content-type': 'application/json' } }),
      );
      for (const res of await Promise.all(wave)) if (res.statusCode !== 200) throw new Error(`audit-heap: dispatch answered ${res.statusCode}: ${res.body}`);
    }
    await runtime.audit.store?.catchUp();
  };
  const heapAfterCollections = () => {
    gc();
    gc();
    return process.memoryUsage().heapUsed;
  };
  try {
    await dispatch(WARM_RECORDS);
    const before = heapAfterCollections();
    await dispatch(records);
    const after = heapAfterCollections();
    const chars = runtime.state.storedBytes?.('audit') ?? Number.NaN;
    return {
      records,
      heapBytesPerRecord: Math.round((after - before) / records),
      recordChars: Math.round(chars / (WARM_RECORDS + records)),
    };
  } finally {
    await app.close();
    await runtime.close();
  }
}

/** Runs the measurement in a child process of its own (a clean heap, --expose-gc). */
export function measureAuditHeap(records: number): Promise<AuditHeapResult> {
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', fileURLToPath(import.meta.url), String(records)], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) reject(new Error(`audit-heap exited with ${code}`));
      else resolve(JSON.parse(out.trim().split('\n').at(-1) ?? '') as AuditHeapResult);
    });
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const records = Number(process.argv[2] ?? 30_000);
  measureHere(records).then(
    (result) => {
      console.log(JSON.stringify(result));
      process.exit(0);
    },
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
