/**
 * The slice of autocannon 8's API the load driver uses (the package ships no types). Shapes
 * follow lib/aggregateResult.js, lib/run.js and lib/httpRequestBuilder.js.
 */
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  namespace autocannon {
    interface RequestParams {
      method?: string;
      path?: string;
      headers?: Record<string, string>;
      body?: string | Buffer;
    }

    interface Request extends RequestParams {
      /** Called before each request on a connection; returns the request to send. */
      setupRequest?: (request: RequestParams) => RequestParams;
    }

    interface Options {
      url: string;
      connections?: number;
      duration?: number;
      amount?: number;
      pipelining?: number;
      timeout?: number;
      method?: string;
      headers?: Record<string, string>;
      body?: string | Buffer;
      requests?: Request[];
      title?: string;
    }

    interface Histogram {
      average: number;
      mean: number;
      stddev: number;
      min: number;
      max: number;
      total: number;
      p50: number;
      p90: number;
      p99: number;
      p99_9: number;
    }

    interface Result {
      duration: number;
      start: Date;
      finish: Date;
      errors: number;
      timeouts: number;
      non2xx: number;
      resets: number;
      '2xx': number;
      '4xx': number;
      '5xx': number;
      statusCodeStats: Record<string, { count: number }>;
      latency: Histogram;
      requests: Histogram & { sent: number };
      throughput: Histogram;
    }

    interface Instance extends EventEmitter {
      stop(): void;
      on(event: 'response', listener: (client: unknown, statusCode: number, resBytes: number, responseTime: number) => void): this;
      on(event: 'done', listener: (result: Result) => void): this;
      on(event: string, listener: (...args: unknown[]) => void): this;
    }
  }

  function autocannon(opts: autocannon.Options, cb: (err: Error | null, result: autocannon.Result) => void): autocannon.Instance;

  export = autocannon;
}
