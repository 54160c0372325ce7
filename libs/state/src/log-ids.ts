/** Log message ids (`<ms>-<seq>`, as Redis Streams make them) in numeric order: negative, zero or positive. */
export function compareLogIds(a: string, b: string): number {
  const [am, as] = parseLogId(a);
  const [bm, bs] = parseLogId(b);
  return am - bm || as - bs;
}

function parseLogId(id: string): [number, number] {
  const [ms = '0', seq = '0'] = id.split('-');
  return [Number(ms), Number(seq)];
}
