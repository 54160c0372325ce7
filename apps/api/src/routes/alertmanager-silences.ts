import { assertCallerCoversScope, visibleTo } from '@sluice/auth';
import type { SluiceConfig } from '@sluice/config';
import {
  AmSilenceIdParams,
  AmSilencesQuery,
  AmStatus,
  GettableSilence,
  PostableSilence,
  SilenceCreateInput,
  SilenceUpdateInput,
  errors,
  isoString,
  type Clock,
  type Silence,
} from '@sluice/core';
import { amSilenceOrder, fromAmMatcher, matchesFilters, parseFilter, stateOf, toGettableSilence, type SilenceService } from '@sluice/gateway';
import { type ErrorHandlingOptions, installAlertmanagerErrorHandling, parseRequest, requestSchema, responseSchema } from '@sluice/http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { callerOf } from '../plugins/access-control.js';

export interface AlertmanagerSilencesOptions {
  silences: SilenceService;
  clock: Clock;
  config: SluiceConfig['alertmanager'];
  version: string;
  errorHandling: ErrorHandlingOptions;
}

type Scope = { namespace: string; tenant: string };
type SilencesQuerystring = { filter?: string | string[]; active: boolean; pending: boolean; expired: boolean };

const tags = ['alertmanager'];
const amError = { type: 'string' } as const;
const params = requestSchema(AmSilenceIdParams);
const read = { access: 'read' } as const;
const manage = { access: 'silences_manage' } as const;

/**
 * Alertmanager's silence API (v2) over Sluice silences in one namespace and tenant
 * (`alertmanager.silences`), so `amtool silence add|query|expire|update` work unchanged:
 * Alertmanager's paths, fields and errors (a JSON string); Sluice's rules for what a silence may
 * be (docs/alertmanager.md#silences-with-amtool).
 */
export async function alertmanagerSilencesRoutes(app: FastifyInstance, opts: AlertmanagerSilencesOptions): Promise<void> {
  const { silences, clock } = opts;
  const startedAt = isoString(clock.now());

  /** The configured scope, covered by the caller's grants; 404 while none is configured. */
  const scopeFor = (request: FastifyRequest): Scope => {
    const scope = opts.config.silences;
    if (scope === null) throw errors.notFoundMessage('the Alertmanager silence API is off: set alertmanager.silences (namespace, tenant)');
    assertCallerCoversScope(callerOf(request), scope);
    return scope;
  };
  /** A silence of the scope (another scope's is not found here, as amtool cannot name it). */
  const inScope = async (scope: Scope, id: string): Promise<Silence> => {
    const silence = await silences.get(id);
    if (silence.namespace !== scope.namespace || silence.tenant !== scope.tenant) throw errors.notFound('silence', id);
    return silence;
  };

  await app.register(async (v2) => {
    installAlertmanagerErrorHandling(v2, opts.errorHandling);

    v2.get(
      '/api/v2/status',
      {
        config: read,
        schema: {
          tags,
          summary: 'Alertmanager status (what amtool reads): no cluster, Sluice’s version',
          // Its errors (authentication) are strings too, as on every route of this API.
          response: { 200: responseSchema(AmStatus), 401: amError, 403: amError },
        },
      },
      async () => ({
        cluster: { name: 'sluice', status: 'disabled' as const, peers: [] },
        versionInfo: { version: opts.version, revision: '', branch: '', buildUser: '', buildDate: '', goVersion: '' },
        config: { original: '' },
        uptime: startedAt,
      }),
    );

    v2.get<{ Querystring: SilencesQuerystring }>(
      '/api/v2/silences',
      {
        config: read,
        schema: {
          tags,
          summary: 'Silences of the alertmanager.silences scope, in Alertmanager’s form',
          querystring: requestSchema(AmSilencesQuery),
          response: { 200: { type: 'array', items: responseSchema(GettableSilence) }, 400: amError, 401: amError, 403: amError, 404: amError },
        },
      },
      async (request) => {
        const scope = scopeFor(request);
        const caller = callerOf(request);
        const raw = request.query.filter;
        const filters = (raw === undefined ? [] : Array.isArray(raw) ? raw : [raw]).map(parseFilter);
        const now = clock.now();
        const wanted = { active: request.query.active, pending: request.query.pending, expired: request.query.expired };
        return silences
          .list({ namespace: scope.namespace, tenant: scope.tenant, include_expired: true, visible: (s) => visibleTo(caller, s) })
          .silences.filter((s) => wanted[stateOf(s, now)] && matchesFilters(s, filters))
          .sort(amSilenceOrder(now))
          .map((s) => toGettableSilence(s, now));
      },
    );

    v2.post<{ Body: PostableSilence }>(
      '/api/v2/silences',
      {
        config: manage,
        schema: {
          tags,
          summary: 'Create a silence in the alertmanager.silences scope, or change one (with id)',
          description:
            'With id: a change of endsAt and comment keeps the silence; other changes expire it and create a new one, whose id is answered (as Alertmanager does).',
          body: requestSchema(PostableSilence),
          response: {
            200: { type: 'object', properties: { silenceID: { type: 'string' } }, required: ['silenceID'] },
            400: amError,
            401: amError,
            403: amError,
            404: amError,
          },
        },
      },
      async (request) => {
        const scope = scopeFor(request);
        const body = request.body;
        const matchers = body.matchers.map(fromAmMatcher);
        const old = body.id !== undefined && body.id !== '' ? await inScope(scope, body.id) : null;
        if (old !== null) {
          const sameMatchers =
            old.matchers.length === matchers.length &&
            old.matchers.every((m, i) => m.name === matchers[i]?.name && m.op === matchers[i]?.op && m.value === matchers[i]?.value);
          if (sameMatchers && Date.parse(old.starts_at) === Date.parse(body.startsAt) && stateOf(old, clock.now()) !== 'expired') {
            await silences.update(old.id, parseRequest(SilenceUpdateInput, { ends_at: body.endsAt, comment: body.comment }));
            return { silenceID: old.id };
          }
        }
        // A start in the past (amtool sends now) starts now.
        const startsAt = Math.max(Date.parse(body.startsAt), clock.now());
        // Sluice's rules for a silence (a comment, bounded matchers and reach) apply as on /v1/silences.
        const input = parseRequest(SilenceCreateInput, { ...scope, matchers, comment: body.comment, starts_at: isoString(startsAt), ends_at: body.endsAt });
        const created = await silences.create(input, callerOf(request).id);
        // The replacement exists before the old one ends: a refused change leaves the old silence muting.
        if (old !== null && stateOf(old, clock.now()) !== 'expired') await silences.expire(old.id);
        return { silenceID: created.id };
      },
    );

    v2.get<{ Params: { silenceID: string } }>(
      '/api/v2/silence/:silenceID',
      { config: read, schema: { tags, summary: 'One silence of the scope', params, response: { 200: responseSchema(GettableSilence), 404: amError } } },
      async (request) => toGettableSilence(await inScope(scopeFor(request), request.params.silenceID), clock.now()),
    );

    v2.delete<{ Params: { silenceID: string } }>(
      '/api/v2/silence/:silenceID',
      {
        config: manage,
        schema: { tags, summary: 'Expire a silence of the scope', params, response: { 200: { type: 'null', description: 'expired' }, 404: amError } },
      },
      async (request, reply) => {
        const silence = await inScope(scopeFor(request), request.params.silenceID);
        await silences.expire(silence.id);
        return reply.status(200).send();
      },
    );
  });
}
