/**
 * Dispatches a gateway has finished, from its Prometheus endpoint (`sluice_actions_total`, one
 * series per outcome). Counting on the server side keeps per-dispatch figures exact: the load
 * generator does not count requests still in flight when a run stops, the server does.
 */
export async function dispatchedActions(baseUrls: readonly string[]): Promise<number> {
  let total = 0;
  for (const url of baseUrls) {
    const res = await fetch(`${url}/metrics`);
    const text = await res.text();
    if (res.status !== 200) throw new Error(`${url}/metrics answered ${res.status}`);
    for (const line of text.split('\n')) {
      if (!line.startsWith('sluice_actions_total')) continue;
      total += Number(line.slice(line.lastIndexOf(' ') + 1));
    }
  }
  return total;
}
