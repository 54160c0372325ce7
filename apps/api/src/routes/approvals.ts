import {
  Approval,
  ApprovalCallerDecision,
  ApprovalDecision,
  ApprovalLinkQuery,
  ApprovalList,
  ApprovalListQuery,
  ApprovalParams,
  ErrorBody,
  errors,
} from '@sluice/core';
import type { ApprovalService, Gateway } from '@sluice/gateway';
import { assertCallerCoversScope, assertCoversOrNotFound, callerCovers, tenantFilterFor, type Caller } from '@sluice/auth';
import type { FastifyInstance } from 'fastify';
import { requestSchema, responseSchema } from '@sluice/http';
import { callerOf } from '../plugins/access-control.js';

const tags = ['approvals'];
const error = responseSchema(ErrorBody);
const params = requestSchema(ApprovalParams);
const linkQuery = requestSchema(ApprovalLinkQuery);

type DecisionRoute = { Params: ApprovalParams; Querystring: ApprovalLinkQuery };

/** Whether the caller's grants cover the action an approval holds (provider and action type too). */
const coversHeldAction = (caller: Caller, a: Approval) =>
  callerCovers(caller, { namespace: a.namespace, tenant: a.tenant, provider: a.action.provider, action_type: a.action.action_type });

export async function approvalsRoutes(app: FastifyInstance, opts: { approvals: ApprovalService; gateway: Gateway }): Promise<void> {
  const { approvals, gateway } = opts;

  app.get<{ Querystring: ApprovalListQuery }>(
    '/v1/approvals',
    {
      config: { access: 'read' },
      schema: {
        tags,
        summary: 'List approvals (pending by default; status filter)',
        querystring: requestSchema(ApprovalListQuery),
        response: { 200: responseSchema(ApprovalList), 400: error, 403: error },
      },
    },
    async (request) => {
      const caller = callerOf(request);
      const tenant = tenantFilterFor(caller, request.query);
      // An approval holds one action, payload included: listed only where its provider and action type are granted too.
      return approvals.list({ ...request.query, tenant }, (a) => coversHeldAction(caller, a));
    },
  );

  app.get<{ Params: ApprovalParams }>(
    '/v1/approvals/:namespace/:tenant/:id',
    { config: { access: 'read' }, schema: { tags, summary: 'One approval', params, response: { 200: responseSchema(Approval), 403: error, 404: error } } },
    async (request) => {
      const caller = callerOf(request);
      assertCallerCoversScope(caller, request.params);
      const approval = await approvals.get(request.params);
      // Outside the grant's providers or actions it does not exist for this caller, as an audit record.
      if (!coversHeldAction(caller, approval)) throw errors.notFound('approval', `${approval.namespace}/${approval.tenant}/${approval.id}`);
      return approval;
    },
  );

  // The signed link is the credential: these two are public (no login), posted by a program or a page's server (docs/approvals.md).
  for (const verb of ['approve', 'reject'] as const) {
    app.post<DecisionRoute>(
      `/v1/approvals/:namespace/:tenant/:id/${verb}`,
      {
        config: { access: 'public' },
        schema: {
          tags,
          summary: verb === 'approve' ? 'Approve: execute the waiting action (once)' : 'Reject: the waiting action is not executed',
          description:
            'Authorized by the HMAC signature in the link (sig, expires_at, kid). A bad, tampered or expired link is 404; an approval already decided is 410. Posted from a browser page of another site it is 403 (the browser guard): post it from a server or a script.',
          params,
          querystring: linkQuery,
          response: { 200: responseSchema(ApprovalDecision), 400: error, 403: error, 404: error, 410: error },
        },
      },
      async (request) =>
        approvals.decide(request.params, request.query, verb, (action, decider) => gateway.dispatch(action, { stagesFrom: 'execute', caller: decider })),
    );
  }

  // The admin UI's decision: the caller's role (dispatch) and a grant covering the waiting action stand for the signed link.
  app.post<{ Params: ApprovalParams; Body: ApprovalCallerDecision }>(
    '/v1/approvals/:namespace/:tenant/:id/decision',
    {
      config: { access: 'dispatch' },
      schema: {
        tags,
        summary: 'Approve or reject as the authenticated caller (admin or operator with a grant covering the action)',
        description: 'The same decision as the signed links, for a signed-in operator. An approval already decided is 410; expired or unknown is 404.',
        params,
        body: requestSchema(ApprovalCallerDecision),
        response: { 200: responseSchema(ApprovalDecision), 400: error, 401: error, 403: error, 404: error, 410: error },
      },
    },
    async (request) => {
      const caller = callerOf(request);
      assertCallerCoversScope(caller, request.params);
      return approvals.decideAsCaller(
        request.params,
        request.body.decision,
        caller,
        // Not covered reads as unknown, as GET answers: a 403 would say the approval exists and what it holds.
        (approval) =>
          assertCoversOrNotFound(caller, approval.action, () => errors.notFound('approval', `${approval.namespace}/${approval.tenant}/${approval.id}`)),
        (action, decider) => gateway.dispatch(action, { stagesFrom: 'execute', caller: decider }),
      );
    },
  );
}
