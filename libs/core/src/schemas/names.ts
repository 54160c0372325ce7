import { z } from 'zod';

/**
 * The control and bidirectional-control characters, as the body of a regex character class: what
 * names refuse, and what the CLI's tables print as escapes (values stored before names refused
 * them, and free text).
 */
export const UNPRINTABLE = '\\u0000-\\u001f\\u007f-\\u009f\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069';

/**
 * The character class of names: anything but the C0 and C1 controls, DEL, the bidirectional
 * controls and a lone UTF-16 surrogate. Controls reach terminals (the CLI's tables) as escape
 * sequences and line breaks that forge rows; a right-to-left override makes `send\u202egnp.exe`
 * read `sendexe.png` in every view. `"\ud800"` parses as JSON, but is no character: encoded as
 * UTF-8 for a Redis key it becomes U+FFFD, so two different names would share one key. With the
 * `u` flag a paired surrogate is one code point and matches; Ajv compiles the pattern with `u` too.
 */
// `*`: an empty name is min(1)'s to refuse, with its own message, not this one's.
const PRINTABLE = new RegExp(`^[^${UNPRINTABLE}\\ud800-\\udfff]*$`, 'u');

/** `.` and `..` are path segments to a browser or a URL library: an id of either cannot be put in a path. */
const NOT_DOT_SEGMENT = /^(?!\.\.?$)/;

/**
 * A scope, routing, state, policy name or client-chosen id: non-empty, at most `max` characters,
 * free of control characters, bidirectional controls and lone surrogates, not `.` or `..`.
 */
export function boundedName(max = 256) {
  return z
    .string()
    .min(1)
    .max(max)
    .regex(PRINTABLE, 'must not contain control characters, bidirectional controls or lone surrogates')
    .regex(NOT_DOT_SEGMENT, 'must not be . or ..');
}
