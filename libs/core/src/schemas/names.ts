import { z } from 'zod';

/** The character class of names: anything but the C0 controls and DEL. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point: names must not contain them.
const PRINTABLE = /^[^\u0000-\u001f\u007f]+$/;

/** A scope, routing, state or policy name: non-empty, at most `max` characters, free of control characters. */
export function boundedName(max = 256) {
  return z.string().min(1).max(max).regex(PRINTABLE, 'must not contain control characters');
}
