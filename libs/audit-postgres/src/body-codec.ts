import type { Pool } from 'pg';
import { DICTIONARY_BYTES, trainDictionary, type BodySample } from './body-dictionary.js';
import { FrameReader, FrameWriter } from './body-frames.js';

export interface BodyCodecOptions {
  /** A dictionary older than this is trained again from recent bodies, so that it follows what payloads look like (default a day). */
  maxAgeMs?: number;
  /** Bodies a dictionary is trained from, at most (default 256); one trained from fewer is trained again once twice as many are at hand. */
  sampleSize?: number;
  now?: () => number;
}

/** Encoded bodies and the dictionary they were compressed with (null: none). */
export interface EncodedBodies {
  dictionary: number | null;
  bodies: Buffer[];
}

interface WriterDictionary {
  id: number;
  bytes: Buffer;
  createdMs: number;
  sampleRecords: number;
  /** Compresses against it (loaded once). */
  frames: FrameWriter;
}

const DAY_MS = 86_400_000;
/** Dictionaries a reader keeps (up to 32 KB each); more are loaded again when asked for. */
const CACHED_DICTIONARIES = 256;

/**
 * Compresses record bodies for audit_records.body_z and back. Writers compress with the newest
 * dictionary of audit_dictionaries, training and storing one from the bodies they see when there
 * is none fit to use; every row names its dictionary, dictionaries are never changed, so readers
 * load each once and keep it.
 */
export class BodyCodec {
  private readonly maxAgeMs: number;
  private readonly sampleSize: number;
  private readonly now: () => number;
  private readonly table: string;
  private writer: WriterDictionary | null = null;
  private newestLoaded = false;
  /** Recent bodies, the next dictionary's sample (a ring of sampleSize). */
  private readonly recent: BodySample[] = [];
  private recentNext = 0;
  private readonly cache = new Map<number, Buffer>();
  private readonly reader = new FrameReader();
  /** Compresses while no dictionary is fit (a first batch too small to train one). */
  private plainFrames: FrameWriter | null = null;

  constructor(
    private readonly pool: Pool,
    quotedSchema: string,
    opts: BodyCodecOptions = {},
  ) {
    this.table = `${quotedSchema}.audit_dictionaries`;
    this.maxAgeMs = opts.maxAgeMs ?? DAY_MS;
    this.sampleSize = opts.sampleSize ?? 256;
    this.now = opts.now ?? Date.now;
  }

  /** Compresses the bodies (their JSON), with a dictionary trained from them and earlier ones when none is fit. */
  async encode(samples: readonly BodySample[]): Promise<EncodedBodies> {
    this.remember(samples);
    const dictionary = await this.writerDictionary();
    if (dictionary === null) this.plainFrames ??= new FrameWriter(null);
    const frames = dictionary?.frames ?? (this.plainFrames as FrameWriter);
    return { dictionary: dictionary?.id ?? null, bodies: samples.map((s) => frames.write(s.body)) };
  }

  /** The bodies' JSON back, dictionaries loaded as needed. */
  async decode(encoded: readonly { body: Buffer; dictionary: number | null }[]): Promise<string[]> {
    const missing = [...new Set(encoded.map((e) => e.dictionary))].filter((id): id is number => id !== null && !this.cache.has(id));
    if (missing.length > 0) {
      const { rows } = await this.pool.query<{ id: number; dictionary: Buffer }>(`SELECT id, dictionary FROM ${this.table} WHERE id = ANY($1::int[])`, [
        missing,
      ]);
      for (const row of rows) this.keep(row.id, row.dictionary);
    }
    // By dictionary, so that the reader loads each once, then back in the rows' order.
    const order = encoded.map((_, i) => i).sort((a, b) => (encoded[a]?.dictionary ?? -1) - (encoded[b]?.dictionary ?? -1));
    const decoded: string[] = new Array(encoded.length);
    for (const i of order) {
      const { body, dictionary } = encoded[i] as { body: Buffer; dictionary: number | null };
      const bytes = dictionary === null ? null : this.cache.get(dictionary);
      if (bytes === undefined) throw new Error(`audit body dictionary ${dictionary} is missing from ${this.table}`);
      decoded[i] = this.reader.read(body, bytes);
    }
    return decoded;
  }

  private remember(samples: readonly BodySample[]): void {
    for (const sample of samples.slice(-this.sampleSize)) {
      this.recent[this.recentNext] = sample;
      this.recentNext = (this.recentNext + 1) % this.sampleSize;
    }
  }

  /** The dictionary to compress with: this process's, the newest stored (another process's), or a new one. */
  private async writerDictionary(): Promise<WriterDictionary | null> {
    if (this.writer !== null && this.fit(this.writer)) return this.writer;
    if (!this.newestLoaded) {
      this.newestLoaded = true;
      const { rows } = await this.pool.query<{ id: number; dictionary: Buffer; created_ms: string; sample_records: number }>(
        `SELECT id, dictionary, (extract(epoch FROM created_at) * 1000)::bigint AS created_ms, sample_records FROM ${this.table} ORDER BY id DESC LIMIT 1`,
      );
      const row = rows[0];
      if (row !== undefined) {
        this.writer = {
          id: row.id,
          bytes: row.dictionary,
          createdMs: Number(row.created_ms),
          sampleRecords: row.sample_records,
          frames: new FrameWriter(row.dictionary),
        };
      }
      if (this.writer !== null && this.fit(this.writer)) return this.writer;
    }
    const bytes = trainDictionary(this.recent, DICTIONARY_BYTES);
    if (bytes.length === 0) return this.writer;
    const createdMs = this.now();
    const { rows } = await this.pool.query<{ id: number }>(
      `INSERT INTO ${this.table} (created_at, sample_records, dictionary) VALUES ($1, $2, $3) RETURNING id`,
      [new Date(createdMs).toISOString(), this.recent.length, bytes],
    );
    const stored = rows[0] as { id: number };
    this.writer = { id: stored.id, bytes, createdMs, sampleRecords: this.recent.length, frames: new FrameWriter(bytes) };
    this.keep(stored.id, bytes);
    return this.writer;
  }

  /** Young enough, and trained from a full sample or at least half of what is at hand now. */
  private fit(d: WriterDictionary): boolean {
    if (this.now() - d.createdMs >= this.maxAgeMs) return false;
    return d.sampleRecords >= this.sampleSize || this.recent.length < 2 * d.sampleRecords;
  }

  private keep(id: number, bytes: Buffer): void {
    if (this.cache.size >= CACHED_DICTIONARIES) this.cache.delete(this.cache.keys().next().value as number);
    this.cache.set(id, bytes);
  }
}
