import {
  ErrorBody,
  TimeInterval,
  TimeIntervalCreateInput,
  TimeIntervalList,
  TimeIntervalListQuery,
  TimeIntervalNameParams,
  TimeIntervalScopeQuery,
  TimeIntervalUpdateInput,
} from '@sluice/core';
import type { TimeIntervalService } from '@sluice/gateway';
import { assertCallerCoversScope, tenantFilterFor, visibleTo } from '@sluice/auth';
import type { FastifyInstance } from 'fastify';
import { parseRequest, requestSchema, responseSchema, noContent } from '@sluice/http';
import { callerOf } from '../plugins/access-control.js';

const tags = ['time-intervals'];
const error = responseSchema(ErrorBody);
const params = requestSchema(TimeIntervalNameParams);
const scopeQuery = requestSchema(TimeIntervalScopeQuery);
const interval = responseSchema(TimeInterval);
const manage = { access: 'time_intervals_manage' } as const;
const read = { access: 'read' } as const;

type NamedRoute = { Params: { name: string }; Querystring: TimeIntervalScopeQuery };

export async function timeIntervalsRoutes(app: FastifyInstance, opts: { timeIntervals: TimeIntervalService }): Promise<void> {
  const { timeIntervals } = opts;

  app.post<{ Body: TimeIntervalCreateInput }>(
    '/v1/time-intervals',
    {
      config: manage,
      schema: {
        tags,
        summary: 'Create a time interval (recurring windows in a time zone) that rules name in mute_time_intervals / active_time_intervals',
        body: requestSchema(TimeIntervalCreateInput),
        response: { 201: interval, 400: error, 403: error, 409: error },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      const input = parseRequest(TimeIntervalCreateInput, request.body);
      assertCallerCoversScope(caller, input);
      return reply.status(201).send(await timeIntervals.create(input, caller.id));
    },
  );

  app.get<{ Querystring: TimeIntervalListQuery }>(
    '/v1/time-intervals',
    {
      config: read,
      schema: {
        tags,
        summary: 'List time intervals, with whether each is active now',
        querystring: requestSchema(TimeIntervalListQuery),
        response: { 200: responseSchema(TimeIntervalList), 400: error, 403: error },
      },
    },
    async (request) => {
      const caller = callerOf(request);
      const tenant = tenantFilterFor(caller, request.query);
      return timeIntervals.list({ ...request.query, tenant, visible: (i) => visibleTo(caller, i) });
    },
  );

  app.get<NamedRoute>(
    '/v1/time-intervals/:name',
    {
      config: read,
      schema: {
        tags,
        summary: 'One time interval of a namespace and tenant',
        params,
        querystring: scopeQuery,
        response: { 200: interval, 400: error, 403: error, 404: error },
      },
    },
    async (request) => {
      assertCallerCoversScope(callerOf(request), request.query);
      return timeIntervals.get(request.query, request.params.name);
    },
  );

  app.put<NamedRoute & { Body: TimeIntervalUpdateInput }>(
    '/v1/time-intervals/:name',
    {
      config: manage,
      schema: {
        tags,
        summary: 'Change a time interval (partial: time_ranges, location, description); name and scope stay',
        params,
        querystring: scopeQuery,
        body: requestSchema(TimeIntervalUpdateInput),
        response: { 200: interval, 400: error, 403: error, 404: error },
      },
    },
    async (request) => {
      assertCallerCoversScope(callerOf(request), request.query);
      return timeIntervals.update(request.query, request.params.name, parseRequest(TimeIntervalUpdateInput, request.body));
    },
  );

  app.delete<NamedRoute>(
    '/v1/time-intervals/:name',
    {
      config: manage,
      schema: { tags, summary: 'Delete a time interval', params, querystring: scopeQuery, response: { 204: noContent, 400: error, 403: error, 404: error } },
    },
    async (request, reply) => {
      assertCallerCoversScope(callerOf(request), request.query);
      await timeIntervals.remove(request.query, request.params.name);
      return reply.status(204).send();
    },
  );
}
