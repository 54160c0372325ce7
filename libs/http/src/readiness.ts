/** What /ready asks: not draining, and the state backend answers. Liveness (/health) never asks. */
export class Readiness {
  private drainingSince: number | null = null;
  private listenerClosing = false;

  constructor(private readonly ping: () => Promise<boolean>) {}

  startDraining(): void {
    this.drainingSince ??= Date.now();
  }

  get draining(): boolean {
    return this.drainingSince !== null;
  }

  /** The drain delay is over and the listener is closing: requests still arriving are refused. */
  startClosing(): void {
    this.startDraining();
    this.listenerClosing = true;
  }

  get closing(): boolean {
    return this.listenerClosing;
  }

  /** Null when ready, else the reason. */
  async check(): Promise<string | null> {
    if (this.draining) return 'shutting down';
    return (await this.ping()) ? null : 'state backend unreachable';
  }
}
