import {
  BusAckInput,
  BusAcked,
  BusDeadLetters,
  BusLag,
  BusMessages,
  BusReceiveQuery,
  BusSubscription,
  BusSubscriptionInput,
  BusSubscriptionParams,
  BusBindInput,
  BusBinding,
  BusPublished,
  BusPublishInput,
  BusSchema,
  BusSchemaInput,
  BusSchemaList,
  BusSchemaListQuery,
  BusSchemaVersionParams,
  BusSubjectParams,
  BusTopic,
  BusTopicInput,
  BusTopicList,
  BusTopicListQuery,
  BusTopicParams,
  BusValidationFailure,
  ErrorBody,
  errors,
} from '@sluice/core';
import { assertCallerCovers, assertCallerCoversScope, assertCoversOrNotFound, tenantFilterFor, visibleTo } from '@sluice/auth';
import { topicScope, type BusService } from '@sluice/gateway';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { parseRequest, requestSchema, responseSchema, noContent } from '@sluice/http';
import { callerOf } from '../plugins/access-control.js';
import { eventStreams } from '../plugins/event-streams.js';

const tags = ['bus'];
const error = responseSchema(ErrorBody);
const read = { access: 'read' } as const;
// Registering schemas, creating topics and publishing are what operators of a tenant do.
const write = { access: 'dispatch' } as const;
const subjectParams = requestSchema(BusSubjectParams);
const versionParams = requestSchema(BusSchemaVersionParams);
const topicParams = requestSchema(BusTopicParams);
const off = { 503: error };

type Versioned = { Params: BusSchemaVersionParams };
type SubscriptionRoute = { Params: { id: string } };
/** How long one wait of a streamed subscription lasts before a keep-alive comment. */
const STREAM_WAIT_MS = 5000;
type TopicRoute = { Params: BusTopicParams };

/** What a bus grant names as the action (its provider is `bus`): topics and bindings are `manage`, schemas `schema`, as in the reference. */
type BusAction = 'publish' | 'subscribe' | 'manage' | 'schema';

/** 403 unless the caller's grants cover doing `action_type` on the bus of this namespace and tenant. */
function assertBusGrant(request: Parameters<typeof callerOf>[0], scope: { namespace: string; tenant: string }, action_type: BusAction): void {
  assertCallerCovers(callerOf(request), { namespace: scope.namespace, tenant: scope.tenant, provider: 'bus', action_type });
}

export async function busRoutes(app: FastifyInstance, opts: { bus: BusService | null }): Promise<void> {
  // Off: every bus route answers 503 before anything else it would check (after authentication).
  app.addHook('onRequest', async () => {
    if (!opts.bus) throw errors.featureDisabled('message bus is not enabled');
  });
  const bus = opts.bus as BusService;

  app.post<{ Body: BusSchemaInput }>(
    '/v1/bus/schemas',
    {
      config: write,
      schema: {
        tags,
        summary: 'Register a schema version (JSON Schema 2020-12); the server assigns version max + 1',
        description:
          'The body is compiled first: 400 with the compiler’s message when it does not compile. Concurrent registrations get distinct consecutive versions.',
        body: requestSchema(BusSchemaInput),
        response: { 201: responseSchema(BusSchema), 400: error, 403: error, ...off },
      },
    },
    async (request, reply) => {
      assertBusGrant(request, request.body, 'schema');
      return reply.status(201).send(await bus.schemas.register(request.body));
    },
  );

  app.get<{ Querystring: BusSchemaListQuery }>(
    '/v1/bus/schemas',
    {
      config: read,
      schema: {
        tags,
        summary: 'List schema versions (filters, paging)',
        querystring: requestSchema(BusSchemaListQuery),
        response: { 200: responseSchema(BusSchemaList), 400: error, 403: error, ...off },
      },
    },
    async (request) => {
      const caller = callerOf(request);
      const tenant = tenantFilterFor(caller, request.query);
      return bus.schemas.list({ ...request.query, tenant }, (s) => visibleTo(caller, s));
    },
  );

  app.get<{ Params: BusSubjectParams }>(
    '/v1/bus/schemas/:namespace/:tenant/:subject',
    {
      config: read,
      schema: {
        tags,
        summary: 'Every version of a subject',
        params: subjectParams,
        response: { 200: responseSchema(BusSchemaList), 403: error, 404: error, ...off },
      },
    },
    async (request) => {
      assertCallerCoversScope(callerOf(request), request.params);
      return bus.schemas.versions(request.params);
    },
  );

  app.get<Versioned>(
    '/v1/bus/schemas/:namespace/:tenant/:subject/:version',
    {
      config: read,
      schema: { tags, summary: 'One schema version', params: versionParams, response: { 200: responseSchema(BusSchema), 403: error, 404: error, ...off } },
    },
    async (request) => {
      const params = parseRequest(BusSchemaVersionParams, request.params);
      assertCallerCoversScope(callerOf(request), params);
      return bus.schemas.get(params);
    },
  );

  app.delete<Versioned>(
    '/v1/bus/schemas/:namespace/:tenant/:subject/:version',
    {
      config: write,
      schema: {
        tags,
        summary: 'Delete a schema version (409 while a topic is bound to it)',
        params: versionParams,
        response: { 204: noContent, 403: error, 404: error, 409: error, ...off },
      },
    },
    async (request, reply) => {
      const params = parseRequest(BusSchemaVersionParams, request.params);
      assertBusGrant(request, params, 'schema');
      await bus.deleteSchema(params);
      return reply.status(204).send();
    },
  );

  app.post<{ Body: BusTopicInput }>(
    '/v1/bus/topics',
    {
      config: write,
      schema: {
        tags,
        summary: 'Create a topic <namespace>.<tenant>.<name>',
        body: requestSchema(BusTopicInput),
        response: { 201: responseSchema(BusTopic), 400: error, 403: error, 409: error, ...off },
      },
    },
    async (request, reply) => {
      assertBusGrant(request, request.body, 'manage');
      return reply.status(201).send(await bus.topics.create(request.body));
    },
  );

  app.get<{ Querystring: BusTopicListQuery }>(
    '/v1/bus/topics',
    {
      config: read,
      schema: {
        tags,
        summary: 'List topics',
        querystring: requestSchema(BusTopicListQuery),
        response: { 200: responseSchema(BusTopicList), 400: error, 403: error, ...off },
      },
    },
    async (request) => {
      const caller = callerOf(request);
      const tenant = tenantFilterFor(caller, request.query);
      return bus.topics.list({ ...request.query, tenant }, (t) => visibleTo(caller, t));
    },
  );

  app.delete<TopicRoute>(
    '/v1/bus/topics/:namespace/:tenant/:name',
    {
      config: write,
      schema: { tags, summary: 'Delete a topic and its messages', params: topicParams, response: { 204: noContent, 403: error, 404: error, ...off } },
    },
    async (request, reply) => {
      assertBusGrant(request, request.params, 'manage');
      await bus.removeTopic(request.params);
      return reply.status(204).send();
    },
  );

  app.put<TopicRoute & { Body: BusBindInput }>(
    '/v1/bus/topics/:namespace/:tenant/:name/schema',
    {
      config: write,
      schema: {
        tags,
        summary: 'Bind a schema version of the topic’s namespace and tenant: every later publish is validated',
        params: topicParams,
        body: requestSchema(BusBindInput),
        response: { 200: responseSchema(BusBinding), 400: error, 403: error, 404: error, ...off },
      },
    },
    async (request) => {
      assertBusGrant(request, request.params, 'manage');
      const topic = await bus.bind(request.params, request.body);
      return { topic: topic.topic, subject: request.body.subject, version: request.body.version };
    },
  );

  app.delete<TopicRoute>(
    '/v1/bus/topics/:namespace/:tenant/:name/schema',
    {
      config: write,
      schema: {
        tags,
        summary: 'Unbind the topic’s schema: later publishes are not validated',
        params: topicParams,
        response: { 204: noContent, 403: error, 404: error, ...off },
      },
    },
    async (request, reply) => {
      assertBusGrant(request, request.params, 'manage');
      await bus.topics.bind(request.params, null);
      return reply.status(204).send();
    },
  );

  app.post<{ Body: BusPublishInput }>(
    '/v1/bus/publish',
    {
      config: write,
      schema: {
        tags,
        summary: 'Publish a message to a topic (validated when the topic is bound to a schema)',
        description:
          'A payload the bound schema refuses is 400 {error, code, subject, version, issues: [{path, message}]} with at most 10 issues; path is a JSON Pointer ("" for the root). A request the gateway refuses before any schema (a malformed body) is the usual error body.',
        body: requestSchema(BusPublishInput),
        response: { 201: responseSchema(BusPublished), 400: responseSchema(z.union([BusValidationFailure, ErrorBody])), 403: error, 404: error, ...off },
      },
    },
    async (request, reply) => {
      // Grants name the bus as the provider and publish as the action, as for any dispatch.
      const topic = await topicFor(request, request.body.topic, 'publish');
      return reply.status(201).send(await bus.publish(topic, request.body));
    },
  );

  /** The named topic, its tenant's grant checked first: 403 before 404, so a missing topic of another tenant looks like an existing one. */
  const topicFor = async (request: Parameters<typeof callerOf>[0], name: string, action_type: 'publish' | 'subscribe') => {
    const scope = topicScope(name);
    if (scope !== null) assertBusGrant(request, scope, action_type);
    return bus.topicOf(name);
  };

  const subscriptionParams = requestSchema(BusSubscriptionParams);
  const streams = eventStreams(app);
  // A long poll waits up to wait_seconds: the server closing answers it at once (empty, the
  // connection closed) instead of holding the shutdown that long.
  const closing = new AbortController();
  app.addHook('preClose', async () => closing.abort());
  /** The subscription, 404 unless the caller's grants cover subscribing to its topic (a 403 would say the id exists), as every lookup by id. */
  const subscriptionFor = async (request: { params: { id: string } } & Parameters<typeof callerOf>[0]) => {
    const s = await bus.subscriptions.get(request.params.id);
    const tuple = { namespace: s.namespace, tenant: s.tenant, provider: 'bus', action_type: 'subscribe' satisfies BusAction };
    assertCoversOrNotFound(callerOf(request), tuple, () => errors.notFound('bus subscription', s.id));
    return s;
  };

  app.post<{ Body: BusSubscriptionInput }>(
    '/v1/bus/subscriptions',
    {
      config: write,
      schema: {
        tags,
        summary: 'Subscribe to a topic: a consumer group on its stream',
        description: 'from: latest (messages published from now on, the default) or earliest (everything the topic still holds).',
        body: requestSchema(BusSubscriptionInput),
        response: { 201: responseSchema(BusSubscription), 400: error, 403: error, 404: error, ...off },
      },
    },
    async (request, reply) => {
      const input = parseRequest(BusSubscriptionInput, request.body);
      const topic = await topicFor(request, input.topic, 'subscribe');
      return reply.status(201).send(await bus.subscribe(topic, input));
    },
  );

  app.get<SubscriptionRoute>(
    '/v1/bus/subscriptions/:id',
    {
      config: read,
      schema: {
        tags,
        summary: 'One subscription',
        params: subscriptionParams,
        response: { 200: responseSchema(BusSubscription), 403: error, 404: error, ...off },
      },
    },
    async (request) => subscriptionFor(request),
  );

  app.get<SubscriptionRoute & { Querystring: BusReceiveQuery }>(
    '/v1/bus/subscriptions/:id/messages',
    {
      // No HEAD twin: receiving takes messages (and as SSE would hang); HEAD must not.
      exposeHeadRoute: false,
      config: write,
      schema: {
        tags,
        summary: 'Receive messages (long poll, or server-sent events with Accept: text/event-stream)',
        description:
          'Messages wait for POST …/ack; one not acked within bus.visibility_timeout_seconds goes to the next consumer that asks, and after bus.max_deliveries deliveries to the dead-letter stream. ' +
          'As SSE: `event: message`, `id:` the message id, `data:` the message; delivered as they arrive until the client disconnects. ' +
          'A stream is a consumer of its own: what it was sent is not sent on it again, nor dead-lettered by it, while it is open.',
        params: subscriptionParams,
        querystring: requestSchema(BusReceiveQuery),
        response: { 200: responseSchema(BusMessages), 400: error, 403: error, 404: error, ...off },
      },
    },
    async (request, reply) => {
      const s = await subscriptionFor(request);
      const { consumer, max, wait_seconds } = request.query;
      if (!request.headers.accept?.includes('text/event-stream'))
        return { messages: await bus.subscriptions.receive(s, consumer, max, wait_seconds * 1000, closing.signal) };
      const res = streams.start(reply);
      // Its own consumer: what this stream was sent is not sent on it again, nor dead-lettered by it, while it is open.
      const reader = bus.subscriptions.openStream(s, consumer);
      let open = true;
      res.on('close', () => {
        open = false;
      });
      while (open && !closing.signal.aborted) {
        try {
          const messages = await reader.receive(max, STREAM_WAIT_MS, closing.signal);
          if (!open) break; // received after the client left: they stay pending and are redelivered
          let room = messages.length === 0 ? res.write(': ping\n\n') : true;
          for (const m of messages) room = res.write(`event: message\nid: ${m.message_id}\ndata: ${JSON.stringify(m)}\n\n`);
          // A client that does not read takes no more: what it was handed waits for its ack, or goes to another consumer.
          if (!room) {
            await new Promise((resolve) => {
              res.once('drain', resolve);
              res.once('close', resolve);
            });
          }
        } catch (err) {
          request.log.warn({ err }, 'bus subscription stream ended');
          res.end();
          break;
        }
      }
      await reader.close().catch(() => {}); // the group may be gone with its topic; idle consumers are forgotten anyway
    },
  );

  app.post<SubscriptionRoute & { Body: BusAckInput }>(
    '/v1/bus/subscriptions/:id/ack',
    {
      config: write,
      schema: {
        tags,
        summary: 'Acknowledge messages',
        params: subscriptionParams,
        body: requestSchema(BusAckInput),
        response: { 200: responseSchema(BusAcked), 400: error, 403: error, 404: error, ...off },
      },
    },
    async (request) => {
      // Parsed again: the JSON Schema checks the ids' shape, not that each part fits in 64 bits.
      const { message_ids } = parseRequest(BusAckInput, request.body);
      return { acked: await bus.subscriptions.ack(await subscriptionFor(request), message_ids) };
    },
  );

  app.get<SubscriptionRoute>(
    '/v1/bus/subscriptions/:id/lag',
    {
      config: read,
      schema: {
        tags,
        summary: 'Messages not acknowledged: pending (delivered) and undelivered',
        params: subscriptionParams,
        response: { 200: responseSchema(BusLag), 403: error, 404: error, ...off },
      },
    },
    async (request) => {
      const s = await subscriptionFor(request);
      const { pending, undelivered, held } = await bus.subscriptions.lag(s);
      return { subscription: s.id, topic: s.topic, pending, undelivered, lag: pending + undelivered, held };
    },
  );

  app.get<SubscriptionRoute>(
    '/v1/bus/subscriptions/:id/dead-letters',
    {
      config: read,
      schema: {
        tags,
        summary: 'Messages moved aside after bus.max_deliveries unacknowledged deliveries (oldest first, up to 1000)',
        params: subscriptionParams,
        response: { 200: responseSchema(BusDeadLetters), 403: error, 404: error, ...off },
      },
    },
    async (request) => ({ messages: await bus.subscriptions.deadLetters(await subscriptionFor(request), 1000) }),
  );
}
