import type { AnalyticsRollups } from '@sluice/audit';
import { seesEverything, tenantFilterFor, visibleTo } from '@sluice/auth';
import { AnalyticsQuery, AnalyticsResult, ErrorBody, errors, type Clock } from '@sluice/core';
import type { FastifyInstance } from 'fastify';
import { requestSchema, responseSchema } from '@sluice/http';
import { callerOf } from '../plugins/access-control.js';

const error = responseSchema(ErrorBody);
const WEEK_MS = 7 * 24 * 3_600_000;

export interface AnalyticsRouteOptions {
  /** Null when audit is disabled: the route then answers 404 `analytics is not available (audit is disabled)`. */
  analytics: AnalyticsRollups | null;
  clock: Clock;
}

export async function analyticsRoutes(app: FastifyInstance, opts: AnalyticsRouteOptions): Promise<void> {
  app.get<{ Querystring: AnalyticsQuery }>(
    '/v1/analytics',
    {
      config: { access: 'read' },
      schema: {
        tags: ['analytics'],
        summary: 'Action volume, outcomes, top action types, latency and error rate over time',
        description:
          'Computed from hourly and daily rollups. from/to are widened to whole UTC hours; percentiles are histogram bin bounds (< 1.2x above the exact value). A single-tenant caller is scoped to its tenant.',
        querystring: requestSchema(AnalyticsQuery),
        response: { 200: responseSchema(AnalyticsResult), 400: error, 403: error, 404: error },
      },
    },
    async (request) => {
      const { analytics } = opts;
      if (!analytics) throw errors.featureNotEnabled('analytics', 'audit');
      const caller = callerOf(request);
      const { from, to, group_by, top_n, ...q } = request.query;
      const tenant = tenantFilterFor(caller, q);
      const toMs = to === undefined ? opts.clock.now() : Date.parse(to);
      // Seven days before `to` (= now when absent), so `to` alone never yields from > to.
      const fromMs = from === undefined ? toMs - WEEK_MS : Date.parse(from);
      return analytics.query({
        ...q,
        tenant,
        fromMs,
        toMs,
        groupBy: group_by,
        topN: top_n,
        visible: seesEverything(caller) ? undefined : (namespace, of) => visibleTo(caller, { namespace, tenant: of }),
      });
    },
  );
}
