import type { StoredSilence } from '@sluice/core';
import { firstInTenantLine, getOrAdd } from '../policies/tenant-line.js';
import { compileMatchers, type LabelTest, type Labels, withRegexScanBudget } from './silence-matchers.js';
import { windowOf } from './silence-record.js';

/** One silence ready for dispatch: its window in epoch ms and its compiled matchers. */
export interface CompiledSilence {
  id: string;
  /** Its own tenant: the action's, or a parent of it. */
  tenant: string;
  comment: string;
  startsMs: number;
  endsMs: number;
  test: LabelTest;
}

const NO_LABELS: Labels = Object.freeze({});

/**
 * One replica's snapshot of every silence, compiled, by namespace then tenant. Immutable: a
 * reload builds a new one and swaps it whole. A dispatch in a namespace without silences costs
 * one map miss; otherwise the action's tenant and each parent tenant is looked up.
 */
export class SilenceIndex {
  private readonly byScope = new Map<string, Map<string, CompiledSilence[]>>();
  private readonly byId: ReadonlyMap<string, StoredSilence>;
  readonly all: readonly StoredSilence[];

  /** `silences` in creation order (the first that applies is the one reported); ones whose matchers no longer compile are left out and returned. */
  constructor(silences: readonly StoredSilence[], onUnusable: (silence: StoredSilence) => void = () => {}) {
    this.all = silences;
    this.byId = new Map(silences.map((s) => [s.id, s]));
    for (const silence of silences) {
      const compiled = compileMatchers(silence.matchers);
      if (!compiled.ok) {
        onUnusable(silence);
        continue;
      }
      const tenants = getOrAdd(this.byScope, silence.namespace, () => new Map<string, CompiledSilence[]>());
      getOrAdd(tenants, silence.tenant, (): CompiledSilence[] => []).push({
        id: silence.id,
        tenant: silence.tenant,
        comment: silence.comment,
        ...windowOf(silence),
        test: compiled.test,
      });
    }
  }

  get(id: string): StoredSilence | undefined {
    return this.byId.get(id);
  }

  /** The first silence active at `nowMs` in the action's scope whose matchers all hold on its labels. */
  match(namespace: string, tenant: string, labels: Labels | undefined, nowMs: number): CompiledSilence | undefined {
    const tenants = this.byScope.get(namespace);
    if (!tenants) return undefined;
    const seen = labels ?? NO_LABELS;
    return withRegexScanBudget(() =>
      firstInTenantLine(tenant, (scope) => {
        const list = tenants.get(scope);
        if (list) for (const s of list) if (s.startsMs <= nowMs && nowMs < s.endsMs && s.test(seen)) return s;
        return undefined;
      }),
    );
  }
}
