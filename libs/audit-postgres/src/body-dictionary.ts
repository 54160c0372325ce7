/**
 * The compression dictionary of record bodies. A body (payload, details, metadata: ~600 bytes of
 * JSON) compresses poorly alone: a compressor has nothing to refer back to. With a dictionary made of
 * recent bodies of the same installation, most of one — its keys, templates, common values — is a
 * back-reference into the dictionary, and it shrinks to about a quarter.
 */

/** What a dictionary is made from: one record's body, and the group of records it stands for. */
export interface BodySample {
  /** Records of one group tend to share a shape (provider, action type, outcome). */
  group: string;
  body: Buffer;
}

/**
 * Bytes of a dictionary. A compressor loads it once (body-frames.ts), so its size costs nothing
 * per body; a larger one holds more of the installation's shapes (measured on the scale script's
 * bodies: 8 KB 156 B a body, 32 KB 146 B). Readers keep up to 256 (8 MB).
 */
export const DICTIONARY_BYTES = 32_768;

/**
 * A dictionary from sample bodies: the newest body of each group, then older ones while room
 * remains, the commonest groups last. Deflate codes a nearer match in fewer bits, and the end of
 * the dictionary is nearest to the body being compressed. Empty when no body fits.
 */
export function trainDictionary(samples: readonly BodySample[], maxBytes = DICTIONARY_BYTES): Buffer {
  const groups = new Map<string, Buffer[]>();
  for (const { group, body } of samples) {
    const bodies = groups.get(group);
    if (bodies === undefined) groups.set(group, [body]);
    else bodies.push(body);
  }
  // Commonest first while picking (they get the room), rarest first when laid out.
  const byCount = [...groups.values()].sort((a, b) => b.length - a.length);
  const picked = byCount.map((): Buffer[] => []);
  let room = maxBytes;
  for (let round = 0, added = true; added; round++) {
    added = false;
    for (const [g, bodies] of byCount.entries()) {
      const body = bodies[bodies.length - 1 - round];
      if (body === undefined || body.length > room) continue;
      (picked[g] as Buffer[]).unshift(body);
      room -= body.length;
      added = true;
    }
  }
  return Buffer.concat(picked.reverse().flat());
}
