import { inSpanSync, type Span, type Tracer } from '@sluice/telemetry';
import type { DispatchOutcome } from '@sluice/core';
import type { DispatchContext } from './context.js';
import type { Stage } from './stage.js';

/** What a stage's span says once it ran: the rules' match, the provider called and its attempts. */
function annotate(span: Span, stage: Stage['name'], ctx: DispatchContext, outcome: DispatchOutcome | undefined): void {
  if (outcome) span.setAttribute('sluice.outcome', outcome.outcome);
  if (stage === 'rules' && ctx.matchedRule !== null) span.setAttribute('sluice.matched_rule', ctx.matchedRule);
  if (stage === 'execute') {
    span.setAttribute('sluice.provider', ctx.provider);
    if (ctx.attempts !== undefined) span.setAttribute('sluice.attempts', ctx.attempts);
  }
}

/**
 * The stage run inside a span named after it (`stage quota`, `stage rules`, …), so Redis
 * commands and provider calls it makes appear under it — unless it has nothing to do for the
 * action (Stage.idle). Only built with tracing on.
 */
export function tracedStage(stage: Stage, tracer: Tracer): Stage {
  const name = `stage ${stage.name}`;
  return {
    name: stage.name,
    inDryRun: stage.inDryRun,
    // A stage with nothing to wait for answers synchronously; traced, it still does.
    run: (ctx) =>
      stage.idle?.(ctx) === true
        ? stage.run(ctx)
        : inSpanSync(
            tracer,
            name,
            () => stage.run(ctx),
            (span, outcome) => annotate(span, stage.name, ctx, outcome),
          ),
  };
}
