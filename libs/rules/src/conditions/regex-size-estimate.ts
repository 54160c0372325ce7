/**
 * About how many instructions an RE2 pattern compiles to, read from its text without compiling
 * it: compiling costs time in proportion to the program (146 × `a{1000}`, 1 KB of pattern, took
 * half a second to compile before its size was refused), so a pattern clearly over the limit is
 * refused before that. Counts one per atom, multiplies what a counted repeat (`{n}`, `{n,m}`,
 * `{n,}`) applies to, a group included, by its largest count; escapes and character classes are
 * one atom each, and an optional copy (`{0,n}`) as two. An estimate: the compiled size decides
 * for patterns near the limit.
 */
export function estimatedProgramSize(pattern: string): number {
  // One frame per open group: its cost so far, and the cost of its last atom (what a repeat multiplies).
  const frames: { cost: number; last: number }[] = [{ cost: 0, last: 0 }];
  const top = () => frames[frames.length - 1]!;
  const atom = (cost: number) => {
    top().cost += cost;
    top().last = cost;
  };
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      i++;
      atom(1);
    } else if (c === '[') {
      i = classEnd(pattern, i);
      atom(1);
    } else if (c === '(') {
      frames.push({ cost: 0, last: 0 });
    } else if (c === ')' && frames.length > 1) {
      const group = frames.pop()!;
      atom(group.cost + 1);
    } else if (c === '{') {
      const repeat = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i, i + 24));
      if (repeat === null) {
        atom(1); // a literal brace
        continue;
      }
      const [text, low, range, high] = repeat;
      // Copies: the required ones, then two per optional one (an optional copy adds a branch).
      const min = Number(low);
      const max = range === undefined ? min : high === '' ? min + 1 : Math.max(min, Number(high));
      const copies = min + 2 * (max - min);
      const frame = top();
      frame.cost += frame.last * (copies - 1);
      frame.last *= copies;
      i += text.length - 1;
    } else if (c === '|') {
      // Branches add up; RE2 folds single-character alternatives into a class, so the bar adds nothing.
    } else {
      atom(1);
    }
  }
  // Groups left open make the pattern invalid; the compile says so.
  return frames.reduce((sum, f) => sum + f.cost, 0);
}

/** Index of the `]` that ends the class opened at `start` (a leading `]` or `^]` is a member). */
function classEnd(pattern: string, start: number): number {
  let i = start + 1;
  if (pattern[i] === '^') i++;
  if (pattern[i] === ']') i++;
  for (; i < pattern.length; i++) {
    if (pattern[i] === '\\') i++;
    else if (pattern[i] === ']') return i;
  }
  return pattern.length;
}
