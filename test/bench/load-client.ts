/** The runner's handle on the load driver process (load-driver.ts), forked once per bench run. */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { DriverReply, DriverRequest, LoadOptions, LoadResult, OpenLoopLoadOptions, OpenLoopLoadResult } from './load-protocol.js';
import { REPO_ROOT } from './process-launcher.js';

const DRIVER = fileURLToPath(new URL('./load-driver.ts', import.meta.url));

export class LoadClient {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (r: never) => void; reject: (e: Error) => void }>();

  private constructor(private readonly child: ChildProcess) {
    child.on('message', (reply: DriverReply) => {
      const waiter = this.pending.get(reply.id);
      if (!waiter) return;
      this.pending.delete(reply.id);
      if (reply.type === 'error') waiter.reject(new Error(`load driver: ${reply.message}`));
      else waiter.resolve(reply.result as never);
    });
    child.once('exit', (code, signal) => {
      for (const waiter of this.pending.values()) waiter.reject(new Error(`load driver exited (code ${code}, signal ${signal})`));
      this.pending.clear();
    });
  }

  static start(): LoadClient {
    const child = fork(DRIVER, [], { cwd: REPO_ROOT, execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    return new LoadClient(child);
  }

  /** The driver's pid (its CPU shows whether the client, not the server, was the bottleneck). */
  get pid(): number {
    const pid = this.child.pid;
    if (pid === undefined) throw new Error('load driver has no pid');
    return pid;
  }

  /** A closed loop: `connections` requests always in flight (autocannon). */
  run(options: LoadOptions): Promise<LoadResult> {
    return this.request<LoadResult>((id) => ({ type: 'run', id, options }));
  }

  /** An open loop at a fixed rate (open-loop.ts). */
  runOpenLoop(options: OpenLoopLoadOptions): Promise<OpenLoopLoadResult> {
    return this.request<OpenLoopLoadResult>((id) => ({ type: 'open-loop', id, options }));
  }

  private request<T>(message: (id: number) => DriverRequest): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (r: never) => void, reject });
      this.child.send(message(id));
    });
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.disconnect();
    await exited;
  }
}
