import { z } from 'zod';

/**
 * The character class of names: anything but the C0 controls, DEL and a lone UTF-16 surrogate
 * (`"\ud800"` parses as JSON, but is no character: encoded as UTF-8 for a Redis key it becomes
 * U+FFFD, so two different names would share one key). With the `u` flag a paired surrogate is
 * one code point and matches; Ajv compiles the JSON Schema pattern with `u` too.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point: names must not contain them.
const PRINTABLE = /^[^\u0000-\u001f\u007f\ud800-\udfff]+$/u;

/** A scope, routing, state or policy name: non-empty, at most `max` characters, free of control characters and lone surrogates. */
export function boundedName(max = 256) {
  return z.string().min(1).max(max).regex(PRINTABLE, 'must not contain control characters or lone surrogates');
}
