import { SluiceError } from '@sluice/core';
import { describe, expect, it } from 'vitest';
import { ANONYMOUS_CALLER } from './caller.js';
import {
  assertCallerCovers,
  assertCallerCoversScope,
  callerCovers,
  callerCoversScope,
  callerScope,
  describeTuple,
  grantCovers,
  tenantCovered,
  type ActionTuple,
  type Grant,
} from './grants.js';

function grant(parts: Partial<Grant> = {}): Grant {
  return { tenants: ['*'], namespaces: ['*'], providers: ['*'], actions: ['*'], ...parts };
}

const TUPLE: ActionTuple = { namespace: 'billing', tenant: 'acme', provider: 'email', action_type: 'send' };

describe('tenantCovered (hierarchical tenants)', () => {
  it.each<[pattern: string, tenant: string, covered: boolean, why: string]>([
    ['acme', 'acme', true, 'exact'],
    ['acme', 'acme.eu', true, 'child'],
    ['acme', 'acme.eu.paris', true, 'grandchild'],
    ['acme.eu', 'acme.eu.paris', true, 'child of a child grant'],
    ['acme.eu', 'acme', false, 'parent not covered by a child grant'],
    ['acme.eu', 'acme.us', false, 'sibling'],
    ['acme', 'acme-suffix', false, 'dash suffix'],
    ['acme', 'acmesuffix', false, 'plain suffix'],
    ['acme', 'other', false, 'unrelated'],
    ['acme', 'xacme', false, 'prefix before'],
    ['*', 'anything.at.all', true, 'wildcard'],
    ['*', 'acme', true, 'wildcard exact'],
  ])('%s vs %s → %s (%s)', (pattern, tenant, covered) => {
    expect(tenantCovered(pattern, tenant)).toBe(covered);
  });
});

describe('grantCovers', () => {
  it('matches every dimension exactly or by wildcard', () => {
    expect(grantCovers(grant(), TUPLE)).toBe(true);
    expect(grantCovers(grant({ tenants: ['acme'], namespaces: ['billing'], providers: ['email'], actions: ['send'] }), TUPLE)).toBe(true);
  });

  it.each<[keyof Grant, string]>([
    ['tenants', 'globex'],
    ['namespaces', 'ops'],
    ['providers', 'sms'],
    ['actions', 'refund'],
  ])('a mismatch in %s alone refuses', (dimension, other) => {
    expect(grantCovers(grant({ [dimension]: [other] }), TUPLE)).toBe(false);
    expect(grantCovers(grant({ [dimension]: [other, '*'] }), TUPLE)).toBe(true);
  });

  it('namespaces, providers and actions are exact (no hierarchy)', () => {
    expect(grantCovers(grant({ namespaces: ['bill'] }), TUPLE)).toBe(false);
    expect(grantCovers(grant({ providers: ['email'] }), { ...TUPLE, provider: 'email.eu' })).toBe(false);
  });
});

describe('callerCovers', () => {
  it('needs one grant matching all four dimensions, not a mix across grants', () => {
    const caller = {
      grants: [grant({ tenants: ['acme'], namespaces: ['ops'] }), grant({ tenants: ['globex'], namespaces: ['billing'] })],
    };
    expect(callerCovers(caller, TUPLE)).toBe(false);
    expect(callerCovers(caller, { ...TUPLE, namespace: 'ops' })).toBe(true);
    expect(callerCovers(caller, { ...TUPLE, tenant: 'globex.eu' })).toBe(true);
  });

  it('no grants covers nothing; the anonymous caller covers everything', () => {
    expect(callerCovers({ grants: [] }, TUPLE)).toBe(false);
    expect(callerCovers(ANONYMOUS_CALLER, TUPLE)).toBe(true);
  });

  it('assertCallerCovers throws a 403 describing the tuple', () => {
    const err = catchError(() => assertCallerCovers({ grants: [grant({ tenants: ['globex'] })] }, TUPLE));
    expect(err.statusCode).toBe(403);
    expect(err.message).toBe('forbidden: no grant covers tenant=acme, namespace=billing, provider=email, action=send');
  });
});

describe('callerCoversScope', () => {
  const caller = { grants: [grant({ tenants: ['acme'], namespaces: ['billing'], providers: ['sms'], actions: ['page'] })] };

  it('ignores provider and action', () => {
    expect(callerCoversScope(caller, { tenant: 'acme.eu', namespace: 'billing' })).toBe(true);
    expect(callerCoversScope(caller, { tenant: 'acme' })).toBe(true);
    expect(callerCoversScope(caller, { tenant: 'acme', namespace: 'ops' })).toBe(false);
    expect(callerCoversScope(caller, { tenant: 'globex' })).toBe(false);
  });

  it('assertCallerCoversScope names tenant and namespace only', () => {
    const err = catchError(() => assertCallerCoversScope(caller, { tenant: 'globex', namespace: 'ops' }));
    expect(err.message).toBe('forbidden: no grant covers tenant=globex, namespace=ops');
  });
});

describe('callerScope', () => {
  it.each<[string, Grant[], { wildcard: boolean; tenantPatterns: string[]; singleTenant: string | null }]>([
    ['wildcard', [grant()], { wildcard: true, tenantPatterns: ['*'], singleTenant: null }],
    ['wildcard among others', [grant({ tenants: ['acme'] }), grant({ tenants: ['*'] })], { wildcard: true, tenantPatterns: ['*'], singleTenant: null }],
    ['one tenant', [grant({ tenants: ['acme'] })], { wildcard: false, tenantPatterns: ['acme'], singleTenant: 'acme' }],
    [
      'the same tenant in every grant',
      [grant({ tenants: ['acme'], namespaces: ['a'] }), grant({ tenants: ['acme'], namespaces: ['b'] })],
      { wildcard: false, tenantPatterns: ['acme'], singleTenant: 'acme' },
    ],
    ['two tenants in one grant', [grant({ tenants: ['acme', 'globex'] })], { wildcard: false, tenantPatterns: ['acme', 'globex'], singleTenant: null }],
    [
      'different tenants across grants',
      [grant({ tenants: ['acme'] }), grant({ tenants: ['acme.eu'] })],
      { wildcard: false, tenantPatterns: ['acme', 'acme.eu'], singleTenant: null },
    ],
    ['no grants', [], { wildcard: false, tenantPatterns: [], singleTenant: null }],
  ])('%s', (_name, grants, expected) => {
    expect(callerScope({ grants })).toEqual(expected);
  });
});

describe('describeTuple', () => {
  it('lists only the parts given', () => {
    expect(describeTuple(TUPLE)).toBe('tenant=acme, namespace=billing, provider=email, action=send');
    expect(describeTuple({ tenant: 'acme' })).toBe('tenant=acme');
  });
});

describe('ANONYMOUS_CALLER', () => {
  it('is an admin with one wildcard grant, and frozen', () => {
    expect(ANONYMOUS_CALLER).toMatchObject({ id: 'anonymous', role: 'admin', method: 'anonymous' });
    expect(ANONYMOUS_CALLER.grants).toEqual([grant()]);
    expect(() => (ANONYMOUS_CALLER.grants[0] as Grant).tenants.push('x')).toThrow(TypeError);
  });
});

function catchError(fn: () => void): SluiceError {
  try {
    fn();
  } catch (err) {
    if (err instanceof SluiceError) return err;
    throw err;
  }
  throw new Error('expected an error');
}
