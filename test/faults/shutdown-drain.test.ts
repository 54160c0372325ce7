import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { freePort } from '../support/free-port.js';
import { spawnSluice } from '../support/sluice-process.js';
import { sampleAction } from '../support/start-gateway.js';

const LANES = 8;

/**
 * SIGTERM under keep-alive load, with a client that behaves like a load balancer: it polls
 * /ready and stops routing new requests once it answers 503. Every request it did route —
 * including those sent between SIGTERM and its noticing — must be answered 200: no resets, no
 * refused connections, no 503s. The drain delay is what makes that possible.
 */
describe('faults: graceful shutdown under keep-alive load', () => {
  it('keeps serving through the drain delay, closes connections after their answers, and exits 0', async () => {
    const port = await freePort();
    const proc = await spawnSluice(['serve', '--port', String(port), '--host', '127.0.0.1'], {
      port,
      env: { SLUICE_SERVER__DRAIN_DELAY_SECONDS: '2' },
    });
    let routing = true;
    let signalled = 0;
    let noticedAt = 0;
    const answers: { status: number; afterSignal: boolean; connection: string | null }[] = [];
    const errors: { message: string; afterSignal: boolean }[] = [];

    const lane = async () => {
      while (routing) {
        const afterSignal = signalled > 0;
        try {
          const res = await fetch(`${proc.url}/v1/dispatch`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(sampleAction()),
          });
          await res.arrayBuffer();
          answers.push({ status: res.status, afterSignal, connection: res.headers.get('connection') });
        } catch (err) {
          errors.push({ message: String((err as Error).cause ?? err), afterSignal });
        }
      }
    };
    // The load balancer's health check: routing stops at the first 503.
    const poller = async () => {
      while (routing) {
        await sleep(100);
        const res = await fetch(`${proc.url}/ready`).catch(() => null);
        if (res?.status === 503) {
          noticedAt = Date.now();
          routing = false;
        }
        await res?.arrayBuffer();
      }
    };
    const lanes = Promise.all([...Array.from({ length: LANES }, lane), poller()]);
    await sleep(1000);
    signalled = Date.now();
    proc.kill('SIGTERM');
    await lanes;
    const exit = await proc.exited;

    expect(errors).toEqual([]);
    expect(answers.filter((a) => a.status !== 200)).toEqual([]);
    // Requests did arrive after SIGTERM; once the process was draining they were answered with
    // Connection: close (the first few may have been in flight before it handled the signal).
    const late = answers.filter((a) => a.afterSignal);
    expect(late.length).toBeGreaterThan(0);
    expect(late.at(-1)?.connection).toBe('close');
    // /ready turned 503 well within the drain delay; the process then drained and exited 0.
    expect(noticedAt - signalled).toBeLessThan(1500);
    expect(exit.code).toBe(0);
  }, 30_000);
});
