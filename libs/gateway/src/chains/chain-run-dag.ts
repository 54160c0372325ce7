import type { ChainDag, ChainDagNode, ChainRun } from '@sluice/core';

/** Nested runs shown at most this deep (definitions are acyclic; this bounds a corrupted store). */
const MAX_DEPTH = 16;

/**
 * A run's graph: its definition's steps with each one's status, the path it went through (edges
 * between consecutive steps of the path are on it), and under a sub-chain step the child run's
 * graph, or the sub-chain definition's while no child run exists yet.
 */
export async function runDag(
  run: ChainRun,
  loadChild: (id: string) => Promise<ChainRun | null>,
  /** A definition's graph (a sub-chain not started yet); undefined when it no longer exists. */
  plannedDag: (name: string) => ChainDag | undefined,
  depth = 0,
): Promise<ChainDag> {
  const nodes = await Promise.all(
    run.steps.map(async (step): Promise<ChainDagNode> => {
      if (step.sub_chain === null) {
        return { name: step.name, node_type: 'step', provider: step.provider as string, action_type: step.action_type as string, status: step.status };
      }
      const child = step.child_chain_id !== null && depth < MAX_DEPTH ? await loadChild(step.child_chain_id) : null;
      const children = child ? await runDag(child, loadChild, plannedDag, depth + 1) : plannedDag(step.sub_chain);
      return {
        name: step.name,
        node_type: 'sub_chain',
        sub_chain_name: step.sub_chain,
        status: step.status,
        ...(step.child_chain_id !== null ? { child_chain_id: step.child_chain_id } : {}),
        ...(children ? { children } : {}),
      };
    }),
  );
  const onPath = new Set(run.execution_path.slice(1).map((target, i) => `${run.execution_path[i]}\u0000${target}`));
  const edges = run.steps.slice(1).map((step, i) => {
    const source = (run.steps[i] as { name: string }).name;
    return { source, target: step.name, on_execution_path: onPath.has(`${source}\u0000${step.name}`) };
  });
  return { chain_name: run.chain_name, chain_id: run.id, status: run.status, nodes, edges, execution_path: run.execution_path };
}
