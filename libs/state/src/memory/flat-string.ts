/**
 * Keeps a stored string as one flat string. JSON.stringify and concatenation return V8 "cons
 * strings", a tree of pieces (a 1 KB audit record was eleven heap objects); reading a character
 * makes V8 flatten the tree in place, and the collector then drops the pieces. Values held for
 * minutes, a hundred thousand at a time, cost the garbage collector their object count, so the
 * memory backend flattens what it keeps.
 */
export function flatten(s: string): string {
  s.charCodeAt(0);
  return s;
}
