/**
 * Parses JSON text as JSON.parse does, but also refuses a key that appears twice in one object
 * (at any depth): JSON.parse silently keeps the last one, so a log line with two `msg` keys
 * would otherwise pass for valid. Throws naming the first repeated key's path.
 */
export function parseStrictJson(text: string): unknown {
  const value: unknown = JSON.parse(text); // rejects anything that is not JSON
  // The text is valid JSON: a scan only has to follow strings, brackets, colons and commas.
  const stack: { keys: Set<string> | null; expectKey: boolean; path: string }[] = [];
  let lastKey = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    const top = stack.at(-1);
    if (c === '{' || c === '[') {
      const path = top ? `${top.path}${top.keys ? `.${lastKey}` : '[]'}` : '$';
      stack.push({ keys: c === '{' ? new Set() : null, expectKey: c === '{', path });
    } else if (c === '}' || c === ']') {
      stack.pop();
    } else if (c === ',') {
      if (top?.keys) top.expectKey = true;
    } else if (c === ':') {
      if (top) top.expectKey = false;
    } else if (c === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      if (top?.keys && top.expectKey) {
        const key = JSON.parse(text.slice(i, end + 1)) as string; // decoded: "\u006d" is "m"
        if (top.keys.has(key)) throw new Error(`duplicate key ${top.path}.${key}`);
        top.keys.add(key);
        lastKey = key;
      }
      i = end;
    }
  }
  return value;
}
