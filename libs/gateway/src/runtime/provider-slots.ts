/**
 * Each webhook's share of the executor's slots (`executor.max_concurrent` calls in flight per
 * process): its own `max_concurrent`, else half of them when there are several webhooks (one that
 * stops answering leaves the others half), else all of them (alone, it starves no other).
 */
export function providerSlots(
  providers: readonly { name: string; type: string; max_concurrent?: number | undefined }[],
  maxConcurrent: number,
): Map<string, number> {
  const webhooks = providers.filter((p) => p.type === 'webhook');
  const share = webhooks.length > 1 ? Math.max(1, Math.floor(maxConcurrent / 2)) : maxConcurrent;
  return new Map(webhooks.map((p) => [p.name, p.max_concurrent ?? share]));
}
