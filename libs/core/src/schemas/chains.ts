import { z } from 'zod';
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
    delay_seconds: z
      .number()
      .int()
      .min(0)
      .max(7 * 86_400)
      .optional()
      .describe('wait this long before the step runs'),
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
    timeout_seconds: z
      .number()
      .int()
      .positive()
      .max(30 * 86_400)
      .optional()
      .describe('the whole run, sub-chains included'),
    steps: z.array(ChainStep).min(1).max(64),
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
  children?: ChainDag;
}

export interface ChainDag {
  chain_name: string;
  nodes: ChainDagNode[];
  edges: { source: string; target: string; on_execution_path: boolean }[];
  execution_path: string[];
}

/** The DAG response; a sub_chain node nests its chain's graph under `children` (same shape). */
export const ChainDagResponse = z.object({
  chain_name: z.string(),
  nodes: z.array(z.record(z.string(), z.unknown()).describe('{name, node_type: step|sub_chain, provider?, action_type?, sub_chain_name?, children?}')),
  edges: z.array(z.object({ source: z.string(), target: z.string(), on_execution_path: z.boolean() })),
  execution_path: z.array(z.string()).describe('steps a run went through, in order; empty for a definition'),
});
