import { Worker } from 'node:worker_threads';
import { PLUGIN_WORKER_SOURCE } from './plugin-worker-source.js';

/** What a plugin call gives: its answer, or the safe default (no match) when it timed out or failed. */
export interface PluginVerdict {
  verdict: boolean;
  message?: string;
  /** Set when the call gave the safe default: why. */
  error?: string;
  timedOut?: boolean;
}

interface Reply {
  id: number;
  ok: boolean;
  answer?: unknown;
  error?: string;
  memoryBytes?: number;
}

interface Slot {
  worker: Worker;
  busy: boolean;
  waiting: Map<number, (reply: Reply) => void>;
  /** Settles once the thread runs and holds every module: a call's budget starts after it, not during the thread's start-up. */
  ready: Promise<void>;
}

interface Task {
  name: string;
  fn: string;
  input: string;
  resolve: (v: PluginVerdict) => void;
}

export interface PluginPoolOptions {
  size: number;
  cpuLimitMs: number;
  memoryLimitBytes: number;
  /** Told of each call stopped at the CPU budget (sluice_plugin_timeouts_total). */
  onTimeout(plugin: string): void;
}

/**
 * WASM plugin calls on worker threads, one call per thread at a time. A call that runs past the
 * CPU budget has its thread terminated (the only way to stop a busy loop) and answers the safe
 * default; a fresh thread with every module loaded takes its place. The event loop of the
 * gateway never runs plugin code, so a looping plugin delays only the calls queued behind it.
 */
export class PluginPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Task[] = [];
  private readonly modules = new Map<string, Uint8Array>();
  private nextId = 1;
  private closed = false;
  private onClosed: () => void = () => {};
  /** Settles on close(): a call waiting for its thread to start gives up then. */
  private readonly closing = new Promise<void>((resolve) => {
    this.onClosed = resolve;
  });

  constructor(private readonly opts: PluginPoolOptions) {
    for (let i = 0; i < opts.size; i++) this.slots.push(this.spawn());
  }

  /** Instantiates a module on every thread (its start function under the CPU budget); returns its initial memory in bytes. */
  async load(name: string, bytes: Uint8Array): Promise<number> {
    const replies = await Promise.all(this.slots.map((slot) => this.request(slot, { type: 'load', name, bytes }, LOAD_TIMEOUT_MS)));
    const failed = replies.find((r) => !r.ok);
    if (failed) {
      this.unload(name);
      throw new Error(failed.error ?? 'could not be instantiated');
    }
    this.modules.set(name, bytes);
    return replies[0]?.memoryBytes ?? 0;
  }

  unload(name: string): void {
    this.modules.delete(name);
    for (const slot of this.slots) slot.worker.postMessage({ type: 'unload', name });
  }

  call(name: string, fn: string, input: string): Promise<PluginVerdict> {
    if (this.closed) return Promise.resolve({ verdict: false, error: 'plugin pool is closed' });
    return new Promise((resolve) => {
      this.queue.push({ name, fn, input, resolve });
      this.next();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    this.onClosed();
    for (const task of this.queue.splice(0)) task.resolve({ verdict: false, error: 'plugin pool is closed' });
    // Bounded: a thread still starting may not report its exit promptly, and an unref'd thread
    // does not keep the process alive anyway.
    const stopped = Promise.all(this.slots.map((s) => s.worker.terminate()));
    await Promise.race([stopped, new Promise((r) => setTimeout(r, TERMINATE_WAIT_MS).unref())]);
  }

  private next(): void {
    for (const slot of this.slots) {
      if (slot.busy) continue;
      const task = this.queue.shift();
      if (!task) return;
      void this.run(slot, task);
    }
  }

  private async run(slot: Slot, task: Task): Promise<void> {
    slot.busy = true;
    await Promise.race([slot.ready, this.closing]);
    if (this.closed) {
      task.resolve({ verdict: false, error: 'plugin pool is closed' });
      return;
    }
    const reply = await this.request(slot, { type: 'call', name: task.name, fn: task.fn, input: task.input, memoryLimit: this.opts.memoryLimitBytes });
    slot.busy = false;
    task.resolve(verdictOf(reply));
    if (reply.error === TIMED_OUT) this.opts.onTimeout(task.name);
    this.next();
  }

  /** Sends a message and waits for its reply, at most `timeoutMs` (a call: the CPU budget); past it the thread is replaced. */
  private request(slot: Slot, message: Record<string, unknown>, timeoutMs = this.opts.cpuLimitMs): Promise<Reply> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        slot.waiting.delete(id);
        this.replace(slot);
        resolve({ id, ok: false, error: TIMED_OUT });
      }, timeoutMs);
      slot.waiting.set(id, (reply) => {
        clearTimeout(timer);
        resolve(reply);
      });
      slot.worker.postMessage({ ...message, id });
    });
  }

  /** Terminates a thread stuck in a call and puts a fresh one, with every module loaded, in its place. */
  private replace(slot: Slot): void {
    const stuck = slot.worker;
    void stuck.terminate();
    const fresh = this.spawn();
    slot.worker = fresh.worker;
    slot.waiting = fresh.waiting;
    const modules = [...this.modules];
    slot.ready = fresh.ready.then(async () => {
      await Promise.all(modules.map(([name, bytes]) => this.request(slot, { type: 'load', name, bytes }, LOAD_TIMEOUT_MS)));
    });
  }

  private spawn(): Slot {
    const worker = new Worker(PLUGIN_WORKER_SOURCE, { eval: true });
    const ready = new Promise<void>((resolve) => {
      worker.once('online', () => resolve());
      // A thread that fails to start answers nothing; its calls time out and replace it.
      worker.once('error', () => resolve());
    });
    const slot: Slot = { worker, busy: false, waiting: new Map(), ready };
    worker.on('message', (reply: Reply) => slot.waiting.get(reply.id)?.(reply));
    worker.unref();
    return slot;
  }
}

const TIMED_OUT = 'ran past its CPU budget';

/**
 * How long loading a module into a thread may take: compiling and instantiating it, on a thread
 * that may still be starting. Not the per-call CPU budget (100 ms or less), which a busy machine
 * exceeds before the thread runs any plugin code, leaving the plugin unloaded.
 */
const LOAD_TIMEOUT_MS = 10_000;

/** How long close() waits for the threads to exit. */
const TERMINATE_WAIT_MS = 1000;

function verdictOf(reply: Reply): PluginVerdict {
  if (!reply.ok) return { verdict: false, error: reply.error ?? 'failed', ...(reply.error === TIMED_OUT ? { timedOut: true } : {}) };
  const answer = reply.answer as { verdict?: unknown; message?: unknown } | null;
  if (typeof answer?.verdict !== 'boolean') return { verdict: false, error: 'the plugin answered no boolean verdict' };
  return { verdict: answer.verdict, ...(typeof answer.message === 'string' ? { message: answer.message } : {}) };
}
