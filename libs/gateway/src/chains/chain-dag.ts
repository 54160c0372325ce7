import type { ChainDag, ChainDagNode, ChainDefinition } from '@sluice/core';

/** A definition's graph: its steps in order, each edge to the next; a sub-chain step nests its chain's graph. */
export function definitionDag(name: string, all: ReadonlyMap<string, ChainDefinition>, seen: readonly string[] = []): ChainDag {
  const def = all.get(name);
  if (!def) return { chain_name: name, nodes: [], edges: [], execution_path: [] };
  const nodes: ChainDagNode[] = def.steps.map((step) => {
    if (step.sub_chain === undefined) return { name: step.name, node_type: 'step', provider: step.provider as string, action_type: step.action_type as string };
    // Definitions are checked acyclic; `seen` keeps a stored one that is not from looping here.
    const children = seen.includes(step.sub_chain) ? undefined : definitionDag(step.sub_chain, all, [...seen, name]);
    return { name: step.name, node_type: 'sub_chain', sub_chain_name: step.sub_chain, ...(children ? { children } : {}) };
  });
  const edges = def.steps.slice(1).map((step, i) => ({ source: (def.steps[i] as { name: string }).name, target: step.name, on_execution_path: false }));
  return { chain_name: name, nodes, edges, execution_path: [] };
}
