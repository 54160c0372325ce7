import type { DispatchOutcome } from '@sluice/core';
import type { DispatchContext } from './context.js';
import type { Stage } from './stage.js';
import { STAGE_ORDER, type StageName } from './stage-order.js';

/**
 * The stages of one configuration generation, in spec order, resolved once. Features that are
 * off contribute no stage, so the request path never walks over empty steps.
 */
export class Pipeline {
  private readonly live: readonly Stage[];
  private readonly dry: readonly Stage[];

  constructor(stages: readonly Stage[]) {
    const rank = (s: Stage) => STAGE_ORDER.indexOf(s.name);
    const names = new Set<string>();
    for (const s of stages) {
      if (names.has(s.name)) throw new Error(`pipeline stage "${s.name}" given twice`);
      names.add(s.name);
    }
    this.live = [...stages].sort((a, b) => rank(a) - rank(b));
    this.dry = this.live.filter((s) => s.inDryRun);
  }

  get stageNames(): string[] {
    return this.live.map((s) => s.name);
  }

  /**
   * Runs stages until one decides; undefined when none did (only possible in a dry run). `from`
   * skips the stages before it (an approved action resumes at `execute`: its quota was charged
   * and its rules ran when it was dispatched).
   */
  async run(ctx: DispatchContext, from?: StageName): Promise<DispatchOutcome | undefined> {
    const all = ctx.dryRun ? this.dry : this.live;
    const stages = from === undefined ? all : all.filter((s) => STAGE_ORDER.indexOf(s.name) >= STAGE_ORDER.indexOf(from));
    for (const stage of stages) {
      const result = stage.run(ctx);
      const outcome = result instanceof Promise ? await result : result;
      if (outcome) return outcome;
    }
    return undefined;
  }
}
