import { z } from 'zod';
import { MAX_CHAIN_STEPS, MAX_STEP_DELAY_SECONDS, MAX_WAIT_SECONDS, durationSeconds } from './bounds.js';
import { boundedName } from './names.js';

/** What a failed step does to its run: stop it, go on to the next step, or stop it and put the step in the dead-letter queue. */
const ChainOnFailure = z.enum(['abort', 'skip', 'dlq']);

/** One step: a provider call, or a sub-chain run to completion before the next step. */
const ChainStep = z
  .strictObject({
    name: boundedName(128),
    provider: boundedName().optional(),
    action_type: boundedName().optional(),
    sub_chain: boundedName().optional().describe('another chain definition, run instead of a provider call'),
    delay_seconds: durationSeconds(MAX_STEP_DELAY_SECONDS, 0).optional().describe('wait this long before the step runs'),
    on_failure: ChainOnFailure.optional().describe("default: the chain's on_failure"),
  })
  .refine((s) => (s.sub_chain === undefined) === (s.provider !== undefined && s.action_type !== undefined), {
    message: 'a step has either provider and action_type, or sub_chain',
  })
  .refine((s) => s.sub_chain === undefined || (s.provider === undefined && s.action_type === undefined), {
    message: 'a sub_chain step has no provider or action_type',
  });

/** A chain definition (spec "Chain definition"), from `chains.definitions` in the config or the API. */
export const ChainDefinition = z
  .strictObject({
    name: boundedName(128),
    description: z.string().max(1024).optional(),
    on_failure: ChainOnFailure.default('abort'),
    timeout_seconds: durationSeconds(MAX_WAIT_SECONDS).optional().describe('the whole run, sub-chains included'),
    steps: z.array(ChainStep).min(1).max(MAX_CHAIN_STEPS, `at most ${MAX_CHAIN_STEPS} steps`),
  })
  .refine((d) => new Set(d.steps.map((s) => s.name)).size === d.steps.length, { message: 'step names must be unique within a chain', path: ['steps'] });
export type ChainDefinition = z.infer<typeof ChainDefinition>;

export const ChainDefinitionView = z.object({
  name: z.string(),
  description: z.string().optional(),
  on_failure: ChainOnFailure,
  timeout_seconds: z.number().int().optional(),
  steps: z.array(
    z.object({
      name: z.string(),
      provider: z.string().optional(),
      action_type: z.string().optional(),
      sub_chain: z.string().optional(),
      delay_seconds: z.number().int().optional(),
      on_failure: ChainOnFailure.optional(),
    }),
  ),
  source: z.enum(['config', 'api']).describe('config definitions are read-only through the API'),
});
export type ChainDefinitionView = z.infer<typeof ChainDefinitionView>;

export const ChainDefinitionList = z.object({ definitions: z.array(ChainDefinitionView), count: z.number().int() });

export const ChainDefinitionParams = z.object({ name: z.string().min(1).max(128) });

/** A graph node: a provider step, or a sub-chain with its own graph nested. */
export interface ChainDagNode {
  name: string;
  node_type: 'step' | 'sub_chain';
  provider?: string;
  action_type?: string;
  sub_chain_name?: string;
  /** Runs only. */
  status?: ChainStepStatus;
  child_chain_id?: string;
  children?: ChainDag;
}

export interface ChainDag {
  chain_name: string;
  /** Runs only. */
  chain_id?: string;
  status?: ChainRunStatus;
  nodes: ChainDagNode[];
  edges: { source: string; target: string; on_execution_path: boolean }[];
  execution_path: string[];
}

/** The DAG response; a sub_chain node nests its chain's graph under `children` (same shape). */
export const ChainDagResponse = z.object({
  chain_name: z.string(),
  chain_id: z.string().optional().describe('runs only'),
  status: z.string().optional().describe("runs only: the run's status"),
  nodes: z.array(
    z
      .record(z.string(), z.unknown())
      .describe('{name, node_type: step|sub_chain, provider?, action_type?, sub_chain_name?, status? (runs), child_chain_id? (runs), children?}'),
  ),
  edges: z.array(z.object({ source: z.string(), target: z.string(), on_execution_path: z.boolean() })),
  execution_path: z.array(z.string()).describe('steps a run went through, in order; empty for a definition'),
});

const ChainRunStatus = z.enum(['running', 'completed', 'failed', 'cancelled']);
type ChainRunStatus = z.infer<typeof ChainRunStatus>;

/**
 * A step of a run: `pending` until its job runs, `running` while its provider is called,
 * `waiting_sub_chain` while its child run runs; then `completed` or `failed` (a failure its
 * `on_failure` skipped is `failed` too, and the run goes on). Steps a run never reached end
 * `skipped` (the run failed) or `cancelled`.
 */
const ChainStepStatus = z.enum(['pending', 'running', 'waiting_sub_chain', 'completed', 'failed', 'skipped', 'cancelled']);
type ChainStepStatus = z.infer<typeof ChainStepStatus>;

const StepError = z.object({ code: z.string(), message: z.string() });

export const ChainRunStep = z.object({
  name: z.string(),
  status: ChainStepStatus,
  provider: z.string().nullable(),
  action_type: z.string().nullable(),
  sub_chain: z.string().nullable(),
  child_chain_id: z.string().nullable().describe('the run a sub_chain step started'),
  action_id: z.string().nullable().describe("the step's action (provider steps): its audit records carry this id and the chain_id"),
  attempt: z.number().int().describe('1 for the first run of the step'),
  response_body: z.unknown().describe("the provider's response body (a sub-chain step: its last step's); null until completed"),
  error: StepError.nullable(),
  started_at: z.string().nullable(),
  completed_at: z.string().nullable(),
});
export type ChainRunStep = z.infer<typeof ChainRunStep>;

/** The stored run: what a worker advances step by step, by compare-and-swap. */
export const ChainRun = z.object({
  id: z.string(),
  namespace: z.string(),
  tenant: z.string(),
  chain_name: z.string(),
  status: ChainRunStatus,
  /** The definition as the run started: later edits do not change a running chain. */
  definition: ChainDefinition,
  /** Every sub-chain it can reach, by name, as its root run started (absent in runs stored before they were kept). */
  sub_chains: z.record(z.string(), ChainDefinition).optional(),
  /** The action that started the root run: its payload is every step's base payload. */
  trigger: z.object({
    action_id: z.string(),
    /** Its provider and action type: what a grant must cover to see the run (absent in runs stored before they were kept). */
    provider: z.string().optional(),
    action_type: z.string().optional(),
    rule: z.string().nullable(),
    payload: z.record(z.string(), z.unknown()),
    metadata: z.record(z.string(), z.unknown()),
  }),
  /** What the step before the first one gave (a child run: its parent's previous step), else null. */
  seed: z.unknown(),
  current_step: z.number().int(),
  steps: z.array(ChainRunStep),
  execution_path: z.array(z.string()),
  parent_chain_id: z.string().nullable(),
  parent_step: z.number().int().nullable(),
  child_chain_ids: z.array(z.string()),
  started_at: z.string(),
  updated_at: z.string(),
  finished_at: z.string().nullable(),
  deadline_at: z.string().nullable(),
  failure_reason: z.string().nullable(),
  cancel_reason: z.string().nullable(),
  cancelled_by: z.string().nullable(),
});
export type ChainRun = z.infer<typeof ChainRun>;

export const ChainRunSummary = z.object({
  chain_id: z.string(),
  chain_name: z.string(),
  namespace: z.string(),
  tenant: z.string(),
  status: ChainRunStatus,
  current_step: z.number().int().describe('index of the step running or next; total_steps once the run ended'),
  total_steps: z.number().int(),
  started_at: z.string(),
  updated_at: z.string(),
  parent_chain_id: z.string().nullable(),
});
export type ChainRunSummary = z.infer<typeof ChainRunSummary>;

export const ChainRunDetail = ChainRunSummary.extend({
  trigger_action_id: z.string().describe('the dispatched action whose rule started the (root) run'),
  rule: z.string().nullable(),
  steps: z.array(ChainRunStep),
  execution_path: z.array(z.string()).describe('the steps run so far, in order (failed ones included)'),
  child_chain_ids: z.array(z.string()),
  finished_at: z.string().nullable(),
  deadline_at: z.string().nullable().describe("when timeout_seconds fails the run: the tightest of its own and its parents'"),
  duration_ms: z.number().int().nullable().describe('finished runs: finished_at − started_at'),
  failure_reason: z.string().nullable(),
  cancel_reason: z.string().nullable(),
  cancelled_by: z.string().nullable(),
});
export type ChainRunDetail = z.infer<typeof ChainRunDetail>;

export const ChainRunListQuery = z.object({
  namespace: z.string().optional(),
  tenant: z.string().optional().describe('exact tenant'),
  status: ChainRunStatus.optional(),
  chain_name: z.string().optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  offset: z.coerce.number().int().min(0).default(0),
});
export type ChainRunListQuery = z.infer<typeof ChainRunListQuery>;

export const ChainRunList = z.object({ chains: z.array(ChainRunSummary), count: z.number().int().describe('matching runs before paging') });

export const ChainRunParams = z.object({ id: z.string().min(1).max(256) });

export const ChainCancelInput = z.strictObject({
  reason: z.string().max(1024).optional(),
  cancelled_by: z.string().max(256).optional().describe("default: the caller's id"),
});
export type ChainCancelInput = z.infer<typeof ChainCancelInput>;
