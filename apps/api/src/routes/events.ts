import { assertCallerCoversScope } from '@sluice/auth';
import {
  ErrorBody,
  EventFingerprintParams,
  EventList,
  EventListQuery,
  EventRecordView,
  EventScopeQuery,
  EventTransitionInput,
  EventTransitionResult,
  errors,
} from '@sluice/core';
import type { StateMachineService } from '@sluice/gateway';
import type { FastifyInstance } from 'fastify';
import { requestSchema, responseSchema } from '@sluice/http';
import { callerOf } from '../plugins/access-control.js';

const tags = ['events'];
const error = responseSchema(ErrorBody);
const params = requestSchema(EventFingerprintParams);
const read = { access: 'read' } as const;
// Moving an event by hand is an operator's act, like dispatching the action that would move it.
const dispatch = { access: 'dispatch' } as const;

type FingerprintRoute = { Params: { fingerprint: string } };

/**
 * Event lifecycles. Every route names one namespace and tenant, and a grant must cover them (403
 * before anything is looked up, so an event's existence never leaks across tenants).
 */
export async function eventsRoutes(app: FastifyInstance, opts: { stateMachines: StateMachineService }): Promise<void> {
  const { stateMachines } = opts;

  app.get<{ Querystring: EventListQuery }>(
    '/v1/events',
    {
      config: read,
      schema: {
        tags,
        summary: 'Events of one namespace and tenant, most recently changed first',
        querystring: requestSchema(EventListQuery),
        response: { 200: responseSchema(EventList), 400: error, 403: error },
      },
    },
    async (request) => {
      const { namespace, tenant, status, limit } = request.query;
      assertCallerCoversScope(callerOf(request), { namespace, tenant });
      return stateMachines.list(namespace, tenant, { status, limit });
    },
  );

  app.get<FingerprintRoute & { Querystring: EventScopeQuery }>(
    '/v1/events/:fingerprint',
    {
      config: read,
      schema: {
        tags,
        summary: 'One event’s lifecycle record',
        params,
        querystring: requestSchema(EventScopeQuery),
        response: { 200: responseSchema(EventRecordView), 400: error, 403: error, 404: error },
      },
    },
    async (request) => {
      const { namespace, tenant } = request.query;
      assertCallerCoversScope(callerOf(request), { namespace, tenant });
      const event = await stateMachines.get(namespace, tenant, request.params.fingerprint);
      if (!event) throw errors.notFound('event', request.params.fingerprint);
      return event;
    },
  );

  app.put<FingerprintRoute & { Body: EventTransitionInput }>(
    '/v1/events/:fingerprint/transition',
    {
      config: dispatch,
      schema: {
        tags,
        summary: 'Move an event to another state',
        description: 'Body {to, namespace, tenant} (`to_state` is accepted for `to`). 409 when the event’s state machine does not allow the move.',
        params,
        body: requestSchema(EventTransitionInput),
        response: { 200: responseSchema(EventTransitionResult), 400: error, 403: error, 404: error, 409: error },
      },
    },
    async (request) => {
      const { namespace, tenant, to, to_state } = request.body;
      assertCallerCoversScope(callerOf(request), { namespace, tenant });
      const target = to ?? to_state;
      if (target === undefined) throw errors.badRequest('to is required (the target state)');
      if (to !== undefined && to_state !== undefined && to !== to_state) throw errors.badRequest('to and to_state disagree');
      return stateMachines.transition(namespace, tenant, request.params.fingerprint, target);
    },
  );
}
