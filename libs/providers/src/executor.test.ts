import { afterEach, describe, expect, it, vi } from 'vitest';
import { Executor, type ExecutorOptions } from './executor.js';
import { NoopProvider } from './noop-provider.js';
import { ProviderError, type Provider } from './provider.js';
import { closedPortUrl, makeAction, reply, startServer, type TestServer } from './testing/http-server.js';
import { WebhookProvider } from './webhook-provider.js';

let server: TestServer | undefined;
let hook: WebhookProvider | undefined;
afterEach(async () => {
  await hook?.close();
  await server?.close();
  hook = server = undefined;
});

const sleeps: number[] = [];
function executor(over: Partial<ExecutorOptions> = {}): Executor {
  sleeps.length = 0;
  return new Executor({
    maxRetries: 3,
    timeoutMs: 2_000,
    maxConcurrent: 8,
    backoffBaseMs: 100,
    backoffMaxMs: 10_000,
    sleep: async (ms) => void sleeps.push(ms),
    random: () => 0.5,
    ...over,
  });
}

async function webhook(handle: Parameters<typeof startServer>[0]): Promise<WebhookProvider> {
  server = await startServer(handle);
  hook = new WebhookProvider('hook', { url: server.url, maxResponseBytes: 4096, maxJsonDepth: 64 });
  return hook;
}

describe('Executor with a real webhook', () => {
  it('retries a 500 and succeeds on the second attempt', async () => {
    const seen: string[] = [];
    const p = await webhook((_req, res, n) => reply(res, n === 1 ? 500 : 200, { n }));
    const ex = executor({ metrics: { observe: (name, result) => seen.push(`${name}:${result}`) } });
    const result = await ex.execute(p, makeAction());
    expect(result).toEqual({ ok: true, response: expect.objectContaining({ status: 'success', body: { n: 2 } }), attempts: 2 });
    expect(seen).toEqual(['hook:failure', 'hook:success']);
    expect(sleeps).toEqual([50]);
  });

  it('does not retry a 400', async () => {
    const p = await webhook((_req, res) => reply(res, 400, { bad: true }));
    const result = await executor().execute(p, makeAction());
    expect(result).toEqual({ ok: false, error: expect.objectContaining({ code: 'EXECUTION_FAILED', retryable: false, attempts: 1 }) });
    expect(server!.received).toHaveLength(1);
  });

  it.each([408, 429, 503])('retries HTTP %i', async (status) => {
    const p = await webhook((_req, res, n) => reply(res, n === 1 ? status : 200, {}));
    expect(await executor().execute(p, makeAction())).toMatchObject({ ok: true, attempts: 2 });
  });

  it('gives up after 1 + maxRetries attempts on persistent 5xx', async () => {
    const p = await webhook((_req, res) => reply(res, 502, {}));
    const result = await executor({ maxRetries: 2 }).execute(p, makeAction());
    expect(result).toEqual({ ok: false, error: expect.objectContaining({ code: 'EXECUTION_FAILED', retryable: true, attempts: 3 }) });
    expect(server!.received).toHaveLength(3);
  });

  it('waits at least Retry-After, and gives up when it exceeds backoff_max_ms', async () => {
    const p = await webhook((_req, res, n) => reply(res, 429, {}, { 'retry-after': n === 1 ? '1' : '60' }));
    const result = await executor({ random: () => 0 }).execute(p, makeAction());
    expect(sleeps).toEqual([1000]);
    expect(result).toMatchObject({ ok: false, error: { code: 'RATE_LIMITED', retryable: true, attempts: 2 } });
    expect(result.ok ? '' : result.error.message).toContain('Retry-After');
  });

  it('times out each attempt when the server never answers', async () => {
    const p = await webhook(() => {});
    const result = await executor({ timeoutMs: 100, maxRetries: 1 }).execute(p, makeAction());
    expect(result).toMatchObject({ ok: false, error: { code: 'TIMEOUT', retryable: true, attempts: 2 } });
    expect(server!.received).toHaveLength(2);
  });

  it('reports a refused connection as CONNECTION after all attempts', async () => {
    hook = new WebhookProvider('hook', { url: await closedPortUrl(), maxResponseBytes: 1024, maxJsonDepth: 64 });
    const result = await executor({ maxRetries: 2 }).execute(hook, makeAction());
    expect(result).toMatchObject({ ok: false, error: { code: 'CONNECTION', retryable: true, attempts: 3 } });
  });

  it('never runs more than maxConcurrent attempts at once', async () => {
    let active = 0;
    let peak = 0;
    const p = await webhook((_req, res) => {
      peak = Math.max(peak, ++active);
      setTimeout(() => {
        active--;
        reply(res, 200, {});
      }, 50);
    });
    const ex = executor({ maxConcurrent: 2, providerConcurrency: new Map([['hook', 2]]) });
    const results = await Promise.all(Array.from({ length: 6 }, () => ex.execute(p, makeAction())));
    expect(results.every((r) => r.ok)).toBe(true);
    expect(peak).toBe(2);
    expect(ex.inFlight).toBe(0);
  });
});

describe('Executor: one provider cannot take every permit', () => {
  it('a slow provider holds at most its own cap; another provider’s call goes through at once', async () => {
    const held: (() => void)[] = [];
    let peak = 0;
    const slow: Provider = {
      name: 'slow',
      type: 'fake',
      execute: () =>
        new Promise((resolve) => {
          held.push(() => resolve({ status: 'success', body: null, headers: {} }));
          peak = Math.max(peak, held.length);
        }),
    };
    const ex = executor({ maxConcurrent: 4, timeoutMs: 60_000, providerConcurrency: new Map([['slow', 2]]) });
    const stuck = Array.from({ length: 10 }, () => ex.execute(slow, makeAction()));
    await new Promise((r) => setTimeout(r, 20));
    expect(ex.inFlight).toBe(2);
    const fast = await ex.execute(scripted([{ ok: 1 }], 'fast'), makeAction());
    expect(fast.ok).toBe(true);
    // Released one by one, the slow calls all finish, never more than 2 at once.
    while (held.length > 0 || ex.inFlight > 0) {
      held.shift()?.();
      await new Promise((r) => setTimeout(r, 1));
    }
    expect((await Promise.all(stuck)).every((r) => r.ok)).toBe(true);
    expect(peak).toBe(2);
  });

  it('takes a provider’s own cap from providerConcurrency, never above maxConcurrent', async () => {
    let active = 0;
    let peak = 0;
    const counted: Provider = {
      name: 'wide',
      type: 'fake',
      execute: async () => {
        peak = Math.max(peak, ++active);
        await new Promise((r) => setTimeout(r, 20));
        active--;
        return { status: 'success', body: null, headers: {} };
      },
    };
    const ex = executor({ maxConcurrent: 3, providerConcurrency: new Map([['wide', 10]]) });
    await Promise.all(Array.from({ length: 8 }, () => ex.execute(counted, makeAction())));
    expect(peak).toBe(3);
  });
});

/** A provider answering from a script: an Error to throw, or anything else to succeed with. */
function scripted(steps: unknown[], name = 'fake'): Provider & { calls: number } {
  return {
    name,
    type: 'fake',
    calls: 0,
    async execute() {
      const step = steps[this.calls++] ?? steps[steps.length - 1];
      if (step instanceof Error) throw step;
      return { status: 'success', body: step ?? null, headers: {} };
    },
  };
}
const retryable = () => new ProviderError('CONNECTION', 'down', { retryable: true });

describe('Executor backoff and failure handling', () => {
  it('grows delays exponentially with full jitter, capped at backoffMaxMs', async () => {
    const ex = executor({ maxRetries: 5, backoffBaseMs: 100, backoffMaxMs: 500, random: () => 1 });
    const result = await ex.execute(scripted([retryable()]), makeAction());
    expect(result).toMatchObject({ ok: false, error: { attempts: 6 } });
    expect(sleeps).toEqual([100, 200, 400, 500, 500]);
    expect(executor({ random: () => 0.25, backoffBaseMs: 100 }).backoffDelay(3)).toBe(100);
  });

  it('treats a non-ProviderError as EXECUTION_FAILED, not retried', async () => {
    const p = scripted([new TypeError('boom')]);
    const result = await executor().execute(p, makeAction());
    expect(result).toMatchObject({ ok: false, error: { code: 'EXECUTION_FAILED', retryable: false, attempts: 1 } });
    expect(p.calls).toBe(1);
  });

  it('times out a provider that ignores its signal', async () => {
    const stuck: Provider = { name: 'stuck', type: 'fake', execute: () => new Promise(() => {}) };
    const result = await executor({ timeoutMs: 50, maxRetries: 0 }).execute(stuck, makeAction());
    expect(result).toMatchObject({ ok: false, error: { code: 'TIMEOUT', attempts: 1 } });
  });

  it('does not hold a permit while sleeping between attempts', async () => {
    let wake: () => void = () => {};
    const ex = executor({ maxConcurrent: 1, sleep: () => new Promise<void>((r) => (wake = r)) });
    const slow = ex.execute(scripted([retryable(), { done: 1 }]), makeAction());
    await new Promise((r) => setImmediate(r));
    expect(await ex.execute(scripted([{ other: 1 }]), makeAction())).toMatchObject({ ok: true, attempts: 1 });
    wake();
    expect(await slow).toMatchObject({ ok: true, attempts: 2 });
  });

  it('stops when the caller aborts during backoff', async () => {
    const ac = new AbortController();
    const ex = new Executor({ maxRetries: 5, timeoutMs: 1000, maxConcurrent: 1, backoffBaseMs: 10_000, backoffMaxMs: 10_000, random: () => 1 });
    setTimeout(() => ac.abort(), 30);
    const result = await ex.execute(scripted([retryable()]), makeAction(), { signal: ac.signal });
    expect(result).toMatchObject({ ok: false, error: { code: 'EXECUTION_FAILED', retryable: true, attempts: 1 } });
    expect(result.ok ? '' : result.error.message).toContain('aborted');
  });
});

describe('Executor with in-process providers', () => {
  it('runs them without a timer or an AbortController, observing each attempt', async () => {
    const seen: string[] = [];
    const ex = executor({ metrics: { observe: (name, result) => seen.push(`${name}:${result}`) } });
    const timers = vi.spyOn(globalThis, 'setTimeout');
    try {
      const noop = new NoopProvider('email');
      expect(await ex.execute(noop, makeAction())).toEqual({ ok: true, response: { status: 'success', body: {}, headers: {} }, attempts: 1 });
      expect(timers).not.toHaveBeenCalled();
    } finally {
      timers.mockRestore();
    }
    expect(seen).toEqual(['email:success']);
    expect(ex.inFlight).toBe(0);
  });

  it('hand them a signal that never aborts, and report what they throw as before', async () => {
    const signals: AbortSignal[] = [];
    const flaky: Provider = {
      name: 'flaky',
      type: 'fake',
      inProcess: true,
      execute: async (_action, ctx) => {
        signals.push(ctx.signal);
        throw ctx.attempt === 1 ? retryable() : new TypeError('boom');
      },
    };
    const result = await executor().execute(flaky, makeAction());
    expect(result).toMatchObject({ ok: false, error: { code: 'EXECUTION_FAILED', message: 'provider "flaky" failed: boom', retryable: false, attempts: 2 } });
    expect(signals.map((s) => s.aborted)).toEqual([false, false]);
  });

  it('still wait for a permit, and stop when the caller aborts', async () => {
    const ex = executor({ maxConcurrent: 1 });
    let open: () => void = () => {};
    const gate = new Promise<void>((r) => (open = r));
    const slow: Provider = {
      name: 'slow',
      type: 'fake',
      execute: async () => {
        await gate;
        return { status: 'success', body: null, headers: {} };
      },
    };
    const holding = ex.execute(slow, makeAction());
    await new Promise((r) => setImmediate(r));
    const waiting = ex.execute(new NoopProvider(), makeAction());
    await new Promise((r) => setImmediate(r));
    expect(ex.queued).toBe(1);
    open();
    expect(await holding).toMatchObject({ ok: true });
    expect(await waiting).toMatchObject({ ok: true, attempts: 1 });
    const ac = new AbortController();
    ac.abort(new Error('gone'));
    expect(await ex.execute(new NoopProvider(), makeAction(), { signal: ac.signal })).toMatchObject({ ok: false, error: { attempts: 0 } });
    expect(ex.inFlight).toBe(0);
  });
});
