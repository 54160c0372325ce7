import type { EmbeddingCounter } from '@sluice/telemetry';
import { LRUCache } from 'lru-cache';
import { z } from 'zod';
import { parseAnswer, postOpenAi } from './openai-client.js';

const EmbeddingsAnswer = z.object({ data: z.array(z.object({ embedding: z.array(z.number()).min(1) })).min(1) });

export interface EmbeddingServiceOptions {
  endpoint: string;
  model: string;
  apiKey: string | undefined;
  timeoutMs: number;
  failOpen: boolean;
  topicCache: { max: number; ttlMs: number };
  textCache: { max: number; ttlMs: number };
  /** Told of each event the spec counts (cache hits and misses, errors, fail-open similarities). */
  onCount(counter: EmbeddingCounter): void;
}

/** An embedding the service could not get while `fail_open` is false: the dispatch fails with EMBEDDING_FAILED. */
export class EmbeddingFailed extends Error {}

/**
 * Similarity of a text to a topic, by cosine of their embeddings from an OpenAI-compatible
 * `/embeddings` endpoint. Topics (few, long-lived: rule conditions) and texts (many, short-lived:
 * payloads) have their own bounded LRU caches with a TTL. A failed embedding is similarity 0
 * with `fail_open`, else EmbeddingFailed.
 */
export class EmbeddingService {
  private readonly topics: LRUCache<string, number[]>;
  private readonly texts: LRUCache<string, number[]>;

  constructor(private readonly opts: EmbeddingServiceOptions) {
    this.topics = new LRUCache({ max: opts.topicCache.max, ttl: opts.topicCache.ttlMs });
    this.texts = new LRUCache({ max: opts.textCache.max, ttl: opts.textCache.ttlMs });
  }

  /** Fail-open applies: 0 when an embedding fails and `fail_open` is on. */
  async similarity(topic: string, text: string): Promise<number> {
    try {
      return await this.strictSimilarity(topic, text);
    } catch (err) {
      if (!this.opts.failOpen) throw new EmbeddingFailed(err instanceof Error ? err.message : String(err));
      this.opts.onCount('fail_open_count');
      return 0;
    }
  }

  /** No fail-open: what POST /v1/embeddings/similarity answers (a failure is its 500). */
  async strictSimilarity(topic: string, text: string): Promise<number> {
    const [a, b] = await Promise.all([this.embed(topic, this.topics, 'topic'), this.embed(text, this.texts, 'text')]);
    return cosine(a, b);
  }

  private async embed(input: string, cache: LRUCache<string, number[]>, kind: 'topic' | 'text'): Promise<number[]> {
    const cached = cache.get(input);
    if (cached) {
      this.opts.onCount(`${kind}_cache_hits`);
      return cached;
    }
    this.opts.onCount(`${kind}_cache_misses`);
    try {
      const answer = parseAnswer(
        EmbeddingsAnswer,
        await postOpenAi(this.opts.endpoint, '/embeddings', { model: this.opts.model, input }, { apiKey: this.opts.apiKey, timeoutMs: this.opts.timeoutMs }),
        'the embeddings answer',
      );
      const vector = (answer.data[0] as { embedding: number[] }).embedding;
      cache.set(input, vector);
      return vector;
    } catch (err) {
      this.opts.onCount('errors');
      throw err;
    }
  }
}

/**
 * Cosine similarity; 0 for a zero vector or vectors of different lengths (a misconfigured model).
 * Each vector is scaled by its largest component first: cosine does not change, and components
 * near the float range no longer overflow into a NaN (which JSON shows as null).
 */
export function cosine(a: readonly number[], b: readonly number[]): number {
  if (a.length !== b.length) return 0;
  const sa = largest(a);
  const sb = largest(b);
  if (sa === 0 || sb === 0 || !Number.isFinite(sa) || !Number.isFinite(sb)) return 0;
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = (a[i] as number) / sa;
    const y = (b[i] as number) / sb;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return Math.max(-1, Math.min(1, dot / Math.sqrt(na * nb)));
}

function largest(v: readonly number[]): number {
  let max = 0;
  for (const x of v) max = Math.max(max, Math.abs(x));
  return max;
}
