import { afterEach, describe, expect, it, vi } from 'vitest';
import { print } from './print.js';

describe('print as a table', () => {
  afterEach(() => vi.restoreAllMocks());

  const printed = (rows: string[][]) => {
    const write = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    print('table', null, () => rows);
    return String(write.mock.calls[0]?.[0]);
  };

  it('shows control and bidirectional characters as escapes: a value cannot forge a row or move the cursor', () => {
    const out = printed([
      ['ID', 'TYPE'],
      ['fake\n2026-11-29T07:00:00Z  executed', 'send\u202egnp.exe'],
      ['hide\r\u001b[1A\u009b2K', 'ok'],
    ]);
    expect(out.split('\n')).toHaveLength(4); // three rows and the final newline
    expect(out).toContain('fake\\u{a}2026-11-29T07:00:00Z  executed');
    expect(out).toContain('send\\u{202e}gnp.exe');
    expect(out).toContain('hide\\u{d}\\u{1b}[1A\\u{9b}2K');
    // Nothing raw left but the line breaks between rows.
    expect([...out].filter((c) => c !== '\n' && (c < ' ' || c === '\u009b' || c === '\u202e'))).toEqual([]);
  });

  it('aligns columns on what is shown', () => {
    expect(
      printed([
        ['A', 'B'],
        ['x\ty', 'z'],
      ]),
    ).toBe('A        B\nx\\u{9}y  z\n');
  });

  it('leaves JSON output exact', () => {
    const write = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    print('json', { id: 'a\nb' }, () => []);
    expect(JSON.parse(String(write.mock.calls[0]?.[0]))).toEqual({ id: 'a\nb' });
  });
});
