import { describe, expect, it } from 'vitest';
import { renderKey, shareKey } from '../src/keys.js';

describe('shareKey', () => {
  it('renders a shared key once per prefix, and as an unshared one would be', () => {
    const plain = { kind: 'audit-idx', namespace: 'ns:x', tenant: 't{1}', id: 'outcome:executed' };
    const shared = shareKey({ ...plain });
    const first = renderKey('sluice', shared);
    expect(first).toBe(renderKey('sluice', plain));
    expect(first).toBe('sluice:audit-idx:{ns%3Ax:t%7B1%7D}:outcome%3Aexecuted');
    // Another prefix (another store in the process) renders its own string, and is then remembered in its place.
    expect(renderKey('other', shared)).toBe(renderKey('other', plain));
    expect(renderKey('sluice', shared)).toBe(first);
  });

  it('freezes the key: a shared key cannot be changed under the renderings it has', () => {
    const shared = shareKey({ kind: 'k', namespace: 'n', tenant: 't', id: 'a' });
    expect(Object.isFrozen(shared)).toBe(true);
    expect(() => {
      (shared as { id: string }).id = 'b';
    }).toThrow(TypeError);
    expect(renderKey('p', shared)).toBe('p:k:{n:t}:a');
  });
});
