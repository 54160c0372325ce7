/** What /ready asks: not draining, and the state backend answers. Liveness (/health) never asks. */
export class Readiness {
  private drainingSince: number | null = null;

  constructor(private readonly ping: () => Promise<boolean>) {}

  startDraining(): void {
    this.drainingSince ??= Date.now();
  }

  get draining(): boolean {
    return this.drainingSince !== null;
  }

  /** Null when ready, else the reason. */
  async check(): Promise<string | null> {
    if (this.draining) return 'shutting down';
    return (await this.ping()) ? null : 'state backend unreachable';
  }
}
