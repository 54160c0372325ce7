import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { SluiceError, errors, type ActionInput, type ErrorCode, type BatchItemResult, type Clock, type DispatchOutcome } from '@sluice/core';
import { activeSpan, inSpan, traceIdOf, type Span, type Tracer } from '@sluice/telemetry';
import type { AuditRecorder, AuditWriteResult } from './audit/audit-recorder.js';
import type { InternalEventBus } from './events/internal-events.js';
import { normalizeAction } from './normalize-action.js';
import { dispatchContext, type DispatchCaller, type DispatchContext, type RuleTime } from './pipeline/context.js';
import type { Pipeline } from './pipeline/pipeline.js';
import type { StageName } from './pipeline/stage-order.js';

export interface DispatchOptions {
  dryRun?: boolean;
  /** False: a failure that outlives its retries is not dead-lettered (a retry from the queue keeps its entry instead). */
  deadLetter?: boolean;
  /** Skip the stages before this one (an approved action runs from `execute`). */
  stagesFrom?: StageName;
  /** The chain run this dispatch is a step of. */
  chainId?: string | undefined;
  traceparent?: string | undefined;
  caller?: DispatchCaller | undefined;
  /**
   * With tracing on: the active span is this dispatch's (or this batch's) own, the span of a
   * request that is nothing but it. It takes the dispatch's attributes and the stage spans (or
   * the batch's items) instead of a child span that would say the same: a span fewer to record
   * and export per request.
   */
  inRequestSpan?: boolean;
  /** Rule evaluation time shared by the dispatches of one request (a batch's items); each dispatch has its own without it. */
  ruleTime?: RuleTime;
}

/** Where dispatch outcomes are counted (the process's Metrics). */
interface DispatchRecorder {
  recordDispatch(outcome: string, seconds: number): void;
}

export interface GatewayDeps {
  pipeline: Pipeline;
  clock: Clock;
  recorder: DispatchRecorder;
  /** True when a provider of this name can be resolved (batch items naming others are per-item errors). */
  providerExists(name: string): boolean;
  /** False while the state backend is known to be down: nothing starts that could not be recorded. */
  stateAvailable?(): boolean;
  /** Batch items run at most this many at a time; results keep input order. */
  batchConcurrency?: number;
  /** Absent when audit is disabled. */
  audit?: AuditRecorder;
  /** Told of every dispatch (action_dispatched) while anyone listens: the stream's source. */
  events?: InternalEventBus;
  /** Told of a batch item that threw (answered as an item error): for the log. */
  onItemError?(err: unknown): void;
  /** With tracing on: a span per dispatch (stage spans under it) and per batch. */
  tracer?: Tracer | undefined;
}

/** The dispatch entry point shared by the API, replays and background jobs. */
export class Gateway {
  constructor(private readonly deps: GatewayDeps) {}

  dispatch(input: ActionInput, opts: DispatchOptions = {}): Promise<DispatchOutcome> {
    const { tracer } = this.deps;
    if (tracer === undefined) return this.run(input, opts, null);
    const own = opts.inRequestSpan ? activeSpan() : undefined;
    if (own !== undefined) return this.run(input, opts, own);
    return inSpan(tracer, 'dispatch', undefined, (span) => this.run(input, opts, span));
  }

  private async run(input: ActionInput, opts: DispatchOptions, span: Span | null): Promise<DispatchOutcome> {
    // A dispatch whose rules and provider need no state would otherwise execute and then fail
    // to write its audit record: refuse it before anything happens (503, retry later).
    if (this.deps.stateAvailable?.() === false) throw errors.stateUnavailable();
    const started = performance.now();
    const dispatchedAtMs = this.deps.clock.now();
    const action = normalizeAction(input, this.deps.clock, dispatchedAtMs);
    const ctx = dispatchContext(action, opts);
    span?.setAttributes({
      'sluice.action_id': action.id,
      'sluice.namespace': action.namespace,
      'sluice.tenant': action.tenant,
      'sluice.provider': action.provider,
      'sluice.action_type': action.action_type,
    });
    const decided = await this.decide(ctx, opts.stagesFrom);
    span?.setAttributes({ 'sluice.outcome': decided?.outcome ?? 'dry_run', ...(ctx.matchedRule ? { 'sluice.matched_rule': ctx.matchedRule } : {}) });
    // Dry runs leave no trace; everything else is recorded (as the client sent it) before we answer.
    let audit: AuditWriteResult | undefined;
    if (decided && decided.outcome !== 'dry_run' && !ctx.dryRun && this.deps.audit) {
      audit = await this.deps.audit.record({
        action,
        outcome: decided,
        verdict: ctx.verdict,
        matchedRule: ctx.matchedRule,
        details: ctx.auditDetails,
        chainId: ctx.chainId,
        caller: ctx.caller,
        dispatchedAtMs,
        completedAtMs: this.deps.clock.now(),
        intent: ctx.intent,
        // The server's trace when tracing is on, else the caller's (so the trail links to it anyway).
        traceId: span?.spanContext().traceId ?? traceIdOf(ctx.traceparent),
      });
    }
    // A copy: a stage may hand back an outcome object it keeps.
    const answered = decided && audit === 'deferred' ? { ...decided, audit } : decided;
    const outcome: DispatchOutcome = answered ?? {
      outcome: 'dry_run',
      action_id: action.id,
      verdict: ctx.verdict,
      matched_rule: ctx.matchedRule,
      would_be_provider: ctx.provider,
      ...ctx.mutedBy,
    };
    this.deps.recorder.recordDispatch(outcome.outcome, (performance.now() - started) / 1000);
    // Only built while someone listens: a dispatch nobody streams pays nothing for the stream.
    if (answered && outcome.outcome !== 'dry_run' && !ctx.dryRun && this.deps.events?.active) {
      this.deps.events.emit({
        type: 'action_dispatched',
        namespace: action.namespace,
        tenant: action.tenant,
        at: new Date(this.deps.clock.now()).toISOString(),
        data: { action_id: action.id, action_type: action.action_type, provider: ctx.provider, outcome },
      });
    }
    return outcome;
  }

  /**
   * Runs the pipeline. A `failed` outcome gives back what the dispatch took (its dedup key), so a
   * retry is not deduplicated. So does an error before the provider call (the state backend went
   * away): the caller is told to retry, and must not find the key taken. An error after the call
   * started is a 500 saying so, never the 503 that means nothing ran.
   */
  private async decide(ctx: DispatchContext, from: StageName | undefined): Promise<DispatchOutcome | undefined> {
    try {
      const decided = await this.deps.pipeline.run(ctx, from);
      if (decided?.outcome === 'failed') await ctx.onFailed?.();
      return decided;
    } catch (err) {
      if (ctx.providerCalled) throw new SluiceError('INTERNAL', 'the action was sent to its provider, but its outcome could not be recorded', { cause: err });
      await ctx.onFailed?.().catch(() => undefined);
      throw err;
    }
  }

  /**
   * Items run a few at a time; results keep input order. An item that throws (the state backend
   * went away mid-batch) is an item error, not the batch's: the others ran or will run, and a
   * client resending the whole batch on a 503 would run them twice. Refused as a whole only when
   * the backend is known to be down before anything starts.
   */
  dispatchBatch(inputs: readonly ActionInput[], opts: DispatchOptions = {}): Promise<BatchItemResult[]> {
    const { tracer } = this.deps;
    // The items are not the request: each gets a dispatch span of its own.
    const { inRequestSpan, ...itemOpts } = opts;
    if (tracer === undefined) return this.runBatch(inputs, itemOpts);
    // One span for the batch (the request's, or one of its own); each item's dispatch span is its child.
    const own = inRequestSpan ? activeSpan() : undefined;
    if (own === undefined) return inSpan(tracer, 'dispatch_batch', { 'sluice.batch_size': inputs.length }, () => this.runBatch(inputs, itemOpts));
    own.setAttribute('sluice.batch_size', inputs.length);
    return this.runBatch(inputs, itemOpts);
  }

  private async runBatch(inputs: readonly ActionInput[], batchOpts: DispatchOptions): Promise<BatchItemResult[]> {
    if (this.deps.stateAvailable?.() === false) throw errors.stateUnavailable();
    // The items share the request's rule evaluation time (rules.request_max_evaluation_ms).
    const opts: DispatchOptions = { ...batchOpts, ruleTime: batchOpts.ruleTime ?? { spentMs: 0 } };
    const results: BatchItemResult[] = new Array(inputs.length);
    const lanes = Math.min(this.deps.batchConcurrency ?? BATCH_LANES, inputs.length);
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < inputs.length; i = next++) {
        // In memory mode an item may never wait: yield, so other requests (and /health) are served between items.
        if (i >= lanes) await yieldToLoop();
        const input = inputs[i] as ActionInput;
        results[i] = this.deps.providerExists(input.provider)
          ? await this.dispatch(input, opts).then(
              (outcome): BatchItemResult => ({ status: 'success', outcome }),
              (err: unknown): BatchItemResult => {
                this.deps.onItemError?.(err);
                return { status: 'error', error: itemError(err) };
              },
            )
          : { status: 'error', error: { message: `Provider not found: ${input.provider}`, code: 'PROVIDER_NOT_FOUND' } };
      }
    };
    await Promise.all(Array.from({ length: lanes }, worker));
    return results;
  }
}

/** Items of a batch run at a time, unless deps.batchConcurrency says otherwise. */
const BATCH_LANES = 8;

/** What a batch item that threw says: our errors' code and message, never an internal one's. */
function itemError(err: unknown): { message: string; code: ErrorCode } {
  return err instanceof SluiceError ? { message: `${err.code}: ${err.message}`, code: err.code } : { message: 'internal error', code: 'INTERNAL' };
}
