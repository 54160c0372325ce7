import type { Feature, FeatureContext } from '../feature.js';
import { SimilarityUnavailable } from '../stages/rules-stage.js';
import { EmbeddingFailed, EmbeddingService } from './embedding-service.js';
import { outboundKey } from './outbound-key.js';

export interface EmbeddingsFeature extends Feature {
  /** Null while `embedding.enabled` is off: semantic_match rules do not load, the similarity endpoint is 404. */
  readonly service: EmbeddingService | null;
  /** For the rules stage: fail-open applied, and a failure that must fail the dispatch as SimilarityUnavailable. */
  readonly similarity: ((topic: string, text: string) => Promise<number>) | undefined;
}

/** The embedding provider (an OpenAI-compatible `/embeddings`): `semantic_match` conditions and POST /v1/embeddings/similarity. */
export function embeddingsFeature(ctx: FeatureContext): EmbeddingsFeature {
  const cfg = ctx.config.embedding;
  if (!cfg.enabled) return { name: 'embeddings', service: null, similarity: undefined };
  const service = new EmbeddingService({
    endpoint: cfg.endpoint,
    model: cfg.model,
    apiKey: outboundKey(cfg),
    timeoutMs: cfg.timeout_seconds * 1000,
    failOpen: cfg.fail_open,
    topicCache: { max: cfg.topic_cache_capacity, ttlMs: cfg.topic_cache_ttl_seconds * 1000 },
    textCache: { max: cfg.text_cache_capacity, ttlMs: cfg.text_cache_ttl_seconds * 1000 },
    onCount: (counter) => ctx.metrics.countEmbedding(counter),
  });
  ctx.metrics.trackEmbeddings();
  const similarity = async (topic: string, text: string): Promise<number> => {
    try {
      return await service.similarity(topic, text);
    } catch (err) {
      if (err instanceof EmbeddingFailed) throw new SimilarityUnavailable(err.message);
      throw err;
    }
  };
  return { name: 'embeddings', service, similarity };
}
