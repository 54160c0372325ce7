import { createHash } from 'node:crypto';
import type { StateStore } from '@sluice/state';
import { scopeCodeKey, type TenantScope } from './keys.js';

/** Length of a scope code; 22-char id + 6 keeps a global member within a 32-byte allocation on Redis. */
const SCOPE_CODE_LENGTH = 6;

/**
 * Short codes for (namespace, tenant), so global index members need not repeat both names.
 * A code is a hash of the scope; a collision moves on to the next salted hash. Mappings are
 * claimed with setIfAbsent and never change or disappear, so every process derives the same
 * code for a scope and caching them in memory can never go stale.
 */
export class ScopeCodes {
  private readonly codeOfScope = new Map<string, string>();
  private readonly scopeOfCode = new Map<string, TenantScope>();

  constructor(private readonly store: StateStore) {}

  async codeFor(scope: TenantScope): Promise<string> {
    const cached = this.codeOfScope.get(scopeName(scope));
    if (cached !== undefined) return cached;
    const value = JSON.stringify([scope.namespace, scope.tenant]);
    for (let salt = 0; salt < 64; salt++) {
      const code = candidateCode(scope, salt);
      const claimed = (await this.store.setIfAbsent(scopeCodeKey(code), value)) || (await this.store.get(scopeCodeKey(code))) === value;
      if (claimed) {
        this.remember(code, scope);
        return code;
      }
    }
    throw new Error(`audit: no free scope code for ${scope.namespace}/${scope.tenant}`);
  }

  /** The scopes of many codes; unknown codes are absent from the result. */
  async resolve(codes: Iterable<string>): Promise<Map<string, TenantScope>> {
    const out = new Map<string, TenantScope>();
    const missing: string[] = [];
    for (const code of new Set(codes)) {
      const scope = this.scopeOfCode.get(code);
      if (scope !== undefined) out.set(code, scope);
      else missing.push(code);
    }
    if (missing.length === 0) return out;
    const values = await this.store.getMany(missing.map(scopeCodeKey));
    missing.forEach((code, i) => {
      const scope = parseScope(values[i] ?? null);
      if (scope === null) return;
      this.remember(code, scope);
      out.set(code, scope);
    });
    return out;
  }

  private remember(code: string, scope: TenantScope): void {
    this.codeOfScope.set(scopeName(scope), code);
    this.scopeOfCode.set(code, scope);
  }
}

function candidateCode(scope: TenantScope, salt: number): string {
  return createHash('sha256').update(`${salt}\u001f${scope.namespace}\u001f${scope.tenant}`).digest('base64url').slice(0, SCOPE_CODE_LENGTH);
}

function scopeName(scope: TenantScope): string {
  return `${scope.namespace}\u001f${scope.tenant}`;
}

function parseScope(value: string | null): TenantScope | null {
  if (value === null) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return null;
  }
  if (!Array.isArray(parsed) || parsed.length !== 2) return null;
  const [namespace, tenant] = parsed as unknown[];
  return typeof namespace === 'string' && typeof tenant === 'string' ? { namespace, tenant } : null;
}
