import { ErrorBody, SimilarityInput, SimilarityResult, SluiceError, errors } from '@sluice/core';
import type { EmbeddingService } from '@sluice/gateway';
import type { StateStore } from '@sluice/state';
import type { FastifyInstance } from 'fastify';
import { requestSchema, responseSchema } from '@sluice/http';
import { callerOf } from '../plugins/access-control.js';

const error = responseSchema(ErrorBody);
/** The spec's limit: 5 similarity requests per minute per caller, counted across replicas. */
const PER_MINUTE = 5;

export async function embeddingsRoutes(app: FastifyInstance, opts: { embeddings: EmbeddingService | null; state: StateStore }): Promise<void> {
  app.post<{ Body: SimilarityInput }>(
    '/v1/embeddings/similarity',
    {
      config: { access: 'dispatch' },
      schema: {
        tags: ['embeddings'],
        summary: 'Cosine similarity of a text to a topic, through the embedding provider',
        description:
          'At most 5 requests per minute per caller, across all replicas (429 beyond). 404 when no embedding provider is configured; 500 when the provider fails (no fail-open here).',
        body: requestSchema(SimilarityInput),
        response: { 200: responseSchema(SimilarityResult), 400: error, 401: error, 403: error, 404: error, 429: error, 500: error },
      },
    },
    async (request) => {
      if (!opts.embeddings) throw errors.notFoundMessage('no embedding provider is configured');
      const caller = callerOf(request);
      const window = await opts.state.incrementWindow(
        { kind: 'embedding-similarity-rate', namespace: '_', tenant: '_', id: caller.id },
        { windowMs: 60_000, limit: PER_MINUTE },
      );
      if (!window.allowed) throw errors.rateLimited(Math.max(1, Math.ceil((window.resetAtMs - Date.now()) / 1000)));
      try {
        return { similarity: await opts.embeddings.strictSimilarity(request.body.topic, request.body.text), topic: request.body.topic };
      } catch (err) {
        throw new SluiceError('INTERNAL', `embedding similarity failed: ${err instanceof Error ? err.message : String(err)}`);
      }
    },
  );
}
