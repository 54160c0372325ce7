/** The runner's handle on the load driver process (load-driver.ts), forked once per bench run. */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { DriverReply, DriverRequest, LoadOptions, LoadResult } from './load-protocol.js';
import { REPO_ROOT } from './process-launcher.js';

const DRIVER = fileURLToPath(new URL('./load-driver.ts', import.meta.url));

export class LoadClient {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (r: LoadResult) => void; reject: (e: Error) => void }>();

  private constructor(private readonly child: ChildProcess) {
    child.on('message', (reply: DriverReply) => {
      const waiter = this.pending.get(reply.id);
      if (!waiter) return;
      this.pending.delete(reply.id);
      if (reply.type === 'result') waiter.resolve(reply.result);
      else waiter.reject(new Error(`load driver: ${reply.message}`));
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

  run(options: LoadOptions): Promise<LoadResult> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.child.send({ type: 'run', id, options } satisfies DriverRequest);
    });
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.disconnect();
    await exited;
  }
}
