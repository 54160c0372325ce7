import { createRequire } from 'node:module';
import { inflateRawSync } from 'node:zlib';
import type { Compressor, Decompressor } from 'zstd-napi';

/**
 * The compressed form of one body. Written as a Zstandard frame, compressed against the
 * dictionary's bytes as raw content; read as such, or as raw deflate (what rows of schema
 * version 3 hold): a Zstandard frame starts with its magic number, which a raw deflate stream
 * zlib writes never does (those bytes would open a stored block whose length check fails).
 *
 * Why Zstandard: a compressor keeps a dictionary loaded, where zlib hashes it again for every
 * body (Node 20's zlib has no reusable compressor either): ~2 µs a body instead of ~16 µs, for
 * about the same size. The frames are standard: any Zstandard implementation reads them, given
 * the dictionary's bytes.
 */

const ZSTD_MAGIC = Buffer.from([0x28, 0xb5, 0x2f, 0xfd]);
/** Fast, and within a few bytes of the higher levels on bodies this small. */
const ZSTD_LEVEL = 3;
/** zlib's output buffer per inflate call: a body is a few hundred bytes (a larger one takes more rounds). */
const INFLATE_CHUNK_BYTES = 1024;

/**
 * zstd-napi, loaded when the trail first compresses or reads a body: a native addon, an optional
 * dependency, so that an install where it could not be built still runs every other backend.
 */
let zstd: typeof import('zstd-napi') | null = null;
function zstdNapi(): typeof import('zstd-napi') {
  try {
    zstd ??= createRequire(import.meta.url)('zstd-napi') as typeof import('zstd-napi');
  } catch (err) {
    throw new Error(
      `the PostgreSQL audit trail needs the zstd-napi package (a native addon, an optional dependency), which could not be loaded; install it (npm rebuild zstd-napi, with python3, make and a C++ compiler at hand): ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  return zstd;
}

/** Compresses bodies against one dictionary (or none), the dictionary loaded once. */
export class FrameWriter {
  private readonly compressor: Compressor = new (zstdNapi().Compressor)();

  constructor(dictionary: Buffer | null) {
    // No checksum (the row is PostgreSQL's to keep whole), no content size and no dictionary id (the row names its dictionary): bytes saved per body.
    this.compressor.setParameters({ compressionLevel: ZSTD_LEVEL, checksumFlag: false, contentSizeFlag: false, dictIDFlag: false });
    if (dictionary !== null) this.compressor.loadDictionary(dictionary);
  }

  write(body: Buffer): Buffer {
    return this.compressor.compress(body);
  }
}

/** Decompresses bodies of any dictionary, switching the loaded one as the bodies ask. */
export class FrameReader {
  private decompressor: Decompressor | null = null;
  private loaded: Buffer | null = null;

  read(frame: Buffer, dictionary: Buffer | null): string {
    if (!isZstd(frame)) {
      return inflateRawSync(frame, dictionary === null ? { chunkSize: INFLATE_CHUNK_BYTES } : { chunkSize: INFLATE_CHUNK_BYTES, dictionary }).toString();
    }
    this.decompressor ??= new (zstdNapi().Decompressor)();
    const decompressor = this.decompressor;
    if (this.loaded !== dictionary) {
      // An empty dictionary unloads the last one (no dictionary: a plain frame).
      decompressor.loadDictionary(dictionary ?? Buffer.alloc(0));
      this.loaded = dictionary;
    }
    return decompressor.decompress(frame).toString();
  }
}

function isZstd(frame: Buffer): boolean {
  return frame.length >= 4 && frame[0] === ZSTD_MAGIC[0] && frame[1] === ZSTD_MAGIC[1] && frame[2] === ZSTD_MAGIC[2] && frame[3] === ZSTD_MAGIC[3];
}
