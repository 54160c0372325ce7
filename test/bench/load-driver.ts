/**
 * The load generator: a process of its own (forked by load-client.ts) running autocannon, so
 * the client's CPU is never the server's. Receives `run` messages over IPC and answers each
 * with a LoadResult. Body generators persist across runs, so unique keys stay unique between
 * the warm-up and the measured run.
 */
import autocannon from 'autocannon';
import { bodyGenerator, fixedBody, type BodySpec } from './action-body.js';
import type { DriverReply, DriverRequest, LoadOptions, LoadResult, OpenLoopLoadOptions, OpenLoopLoadResult } from './load-protocol.js';
import { runOpenLoop, summarizeLatencies } from './open-loop.js';

const generators = new Map<string, () => string>();

function generatorFor(spec: BodySpec): () => string {
  const key = JSON.stringify(spec);
  let gen = generators.get(key);
  if (!gen) {
    gen = bodyGenerator(spec);
    generators.set(key, gen);
  }
  return gen;
}

function runLoad(opts: LoadOptions): Promise<LoadResult> {
  const headers = { 'content-type': 'application/json' };
  const fixed = fixedBody(opts.body);
  const next = fixed === undefined ? generatorFor(opts.body) : undefined;
  const request: autocannon.Request = next
    ? { method: 'POST', path: opts.path, headers, setupRequest: (req) => ({ ...req, body: next() }) }
    : { method: 'POST', path: opts.path, headers, body: fixed };
  let samples = new Float64Array(1 << 16);
  let count = 0;
  return new Promise((resolve, reject) => {
    const instance = autocannon({ url: opts.url, connections: opts.connections, duration: opts.durationS, requests: [request] }, (err, result) => {
      if (err) return reject(err);
      const statusCodes = Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, s]) => [code, s.count]));
      resolve({
        durationS: result.duration,
        ok: result['2xx'],
        non2xx: result.non2xx,
        errors: result.errors,
        timeouts: result.timeouts,
        statusCodes,
        latency: summarizeLatencies(samples, count),
      });
    });
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      if (statusCode < 200 || statusCode > 299) return;
      if (count === samples.length) {
        const grown = new Float64Array(samples.length * 2);
        grown.set(samples);
        samples = grown;
      }
      samples[count++] = responseTime;
    });
  });
}

/** The open loop's unmeasured lead-in (new sockets and cold code would otherwise set its p99). */
const OPEN_LOOP_WARMUP_S = 1;

function runOpenLoopLoad(opts: OpenLoopLoadOptions): Promise<OpenLoopLoadResult> {
  const fixed = fixedBody(opts.body);
  const { body: _, ...schedule } = opts;
  return runOpenLoop({ ...schedule, warmupS: OPEN_LOOP_WARMUP_S, nextBody: fixed === undefined ? generatorFor(opts.body) : () => fixed });
}

process.on('message', (message: DriverRequest) => {
  const fail = (err: unknown) =>
    process.send?.({ type: 'error', id: message.id, message: err instanceof Error ? err.message : String(err) } satisfies DriverReply);
  if (message.type === 'run') {
    runLoad(message.options).then((result) => process.send?.({ type: 'result', id: message.id, result } satisfies DriverReply), fail);
  } else if (message.type === 'open-loop') {
    runOpenLoopLoad(message.options).then((result) => process.send?.({ type: 'open-loop-result', id: message.id, result } satisfies DriverReply), fail);
  }
});
process.on('disconnect', () => process.exit(0));
