import { assertCoversOrNotFound, seesEverything, tenantFilterFor, visibleTo } from '@sluice/auth';
import { ErrorBody, EventGroup, GroupFlushResult, GroupKeyParams, GroupList, GroupListQuery, errors } from '@sluice/core';
import type { GroupService } from '@sluice/gateway';
import type { FastifyInstance } from 'fastify';
import { requestSchema, responseSchema } from '@sluice/http';
import { callerOf } from '../plugins/access-control.js';

const tags = ['groups'];
const error = responseSchema(ErrorBody);
const params = requestSchema(GroupKeyParams);
const read = { access: 'read' } as const;
// A forced flush sends a notification through a provider: the dispatch permission, as in the reference.
const dispatch = { access: 'dispatch' } as const;

type KeyRoute = { Params: { group_key: string } };

export async function groupsRoutes(app: FastifyInstance, opts: { grouping: Pick<GroupService, 'list' | 'find' | 'close'> }): Promise<void> {
  const { grouping } = opts;

  app.get<{ Querystring: GroupListQuery }>(
    '/v1/groups',
    {
      config: read,
      schema: {
        tags,
        summary: 'List event groups (pending, notified, and recently resolved)',
        querystring: requestSchema(GroupListQuery),
        response: { 200: responseSchema(GroupList), 400: error, 403: error },
      },
    },
    async (request) => {
      const caller = callerOf(request);
      const tenant = tenantFilterFor(caller, request.query);
      const visible = seesEverything(caller) ? undefined : (scope: { namespace: string; tenant: string }) => visibleTo(caller, scope);
      return grouping.list({ ...request.query, ...(tenant !== undefined ? { tenant } : {}) }, visible);
    },
  );

  app.get<KeyRoute>(
    '/v1/groups/:group_key',
    { config: read, schema: { tags, summary: 'One group with all its events', params, response: { 200: responseSchema(EventGroup), 403: error, 404: error } } },
    async (request) => {
      const group = await grouping.find(request.params.group_key);
      if (!group) throw errors.notFound('group', request.params.group_key);
      // The record holds its events' payloads: shown only where the group's provider and action type are granted too.
      assertCoversOrNotFound(callerOf(request), group, () => errors.notFound('group', request.params.group_key));
      return group;
    },
  );

  app.delete<KeyRoute>(
    '/v1/groups/:group_key',
    {
      config: dispatch,
      schema: {
        tags,
        summary: 'Flush a group now (one consolidated notification) and close it',
        params,
        response: { 200: responseSchema(GroupFlushResult), 403: error, 404: error, 409: error },
      },
    },
    async (request) => {
      const group = await grouping.find(request.params.group_key);
      if (!group) throw errors.notFound('group', request.params.group_key);
      // The notification goes to the group's provider as its action type: the grant must cover that, as for a dispatch.
      assertCoversOrNotFound(callerOf(request), group, () => errors.notFound('group', request.params.group_key));
      return grouping.close(request.params.group_key);
    },
  );
}
