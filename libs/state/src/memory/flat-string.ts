/**
 * Keeps a stored string as one flat string. JSON.stringify and concatenation return V8 "cons
 * strings", a tree of pieces (a 1 KB audit record was eleven heap objects); values held for
 * minutes, a hundred thousand at a time, cost the garbage collector their object count, so the
 * memory backend flattens what it keeps: V8 flattens the tree in place, and the collector then
 * drops the pieces.
 *
 * What flattens is a V8 detail. Reading a character did on Node 20 and no longer does on Node 24
 * (its `charCodeAt` walks the tree): there every retained audit record kept ≈ 9 pieces, ≈ 330
 * bytes more. The regexp engine only works on flat strings, so a regexp test flattens its subject
 * on both (flat-string.test.ts measures it on the runtime it runs on).
 */
const FLATTENS_ITS_SUBJECT = /(?:)/;

export function flatten(s: string): string {
  FLATTENS_ITS_SUBJECT.test(s);
  return s;
}
