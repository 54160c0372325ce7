import { coverageReport, type CoverageRollups } from '@sluice/audit';
import { seesEverything, tenantFilterFor, visibleTo } from '@sluice/auth';
import { CoverageQuery, CoverageReport, ErrorBody, errors, type Clock } from '@sluice/core';
import type { RuleRepository } from '@sluice/gateway';
import type { FastifyInstance } from 'fastify';
import { requestSchema, responseSchema } from '@sluice/http';
import { callerOf } from '../plugins/access-control.js';

const error = responseSchema(ErrorBody);
const WEEK_MS = 7 * 24 * 3_600_000;

export interface RulesCoverageRouteOptions {
  /** Null when audit is disabled: the route then answers 404. */
  coverage: CoverageRollups | null;
  rules: RuleRepository;
  clock: Clock;
}

export async function rulesCoverageRoutes(app: FastifyInstance, opts: RulesCoverageRouteOptions): Promise<void> {
  const { rules, clock } = opts;
  app.get<{ Querystring: CoverageQuery }>(
    '/v1/rules/coverage',
    {
      config: { access: 'read' },
      schema: {
        tags: ['rules'],
        summary: 'Which (namespace, tenant, provider, action_type) combinations the rules matched, and which rules matched nothing',
        description:
          'Computed from daily rollups of the audit trail. from/to are widened to whole UTC days; the range may span at most 400 days. A single-tenant caller is scoped to its tenant.',
        querystring: requestSchema(CoverageQuery),
        response: { 200: responseSchema(CoverageReport), 400: error, 403: error, 404: error },
      },
    },
    async (request) => {
      const { coverage } = opts;
      if (!coverage) throw errors.featureNotEnabled('rules coverage', 'audit');
      const caller = callerOf(request);
      const { from, to, namespace } = request.query;
      const tenant = tenantFilterFor(caller, request.query);
      const toMs = to === undefined ? clock.now() : Date.parse(to);
      // Seven days before `to` (= now when absent), so `to` alone never yields from > to.
      const fromMs = from === undefined ? toMs - WEEK_MS : Date.parse(from);
      const result = await coverage.query({
        namespace,
        tenant,
        fromMs,
        toMs,
        visible: seesEverything(caller) ? undefined : (ns, of) => visibleTo(caller, { namespace: ns, tenant: of }),
      });
      const loaded = rules.current.list();
      return coverageReport(result, { loaded: loaded.length, enabled: loaded.filter(rules.isEnabled).map((r) => r.name) });
    },
  );
}
