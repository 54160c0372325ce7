import {
  ErrorBody,
  MAX_ACTIONS_PER_WINDOW,
  MAX_GROUP_SIZE,
  MAX_WAIT_SECONDS,
  PlaygroundInput,
  PlaygroundResult,
  RuleDetail,
  RuleEnabledInput,
  RuleEnabledResult,
  RuleList,
  RuleReloadResult,
  errors,
  type Clock,
} from '@sluice/core';
import { evaluatePlayground, type PlaygroundMutes, type RuleRepository } from '@sluice/gateway';
import type { CompiledRule } from '@sluice/rules';
import { assertCallerCoversScope } from '@sluice/auth';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { requestSchema, responseSchema, noContent } from '@sluice/http';
import { callerOf } from '../plugins/access-control.js';

const tags = ['rules'];
const manage = { access: 'rules_manage' } as const;
/** Rules apply to every tenant, so changing them needs a grant over every tenant and namespace. */
const globalScope = async (request: FastifyRequest) => assertCallerCoversScope(callerOf(request), { tenant: '*', namespace: '*' });
const error = responseSchema(ErrorBody);
const NameParams = requestSchema(z.object({ name: z.string().min(1).max(256) }));
/** Rule bodies are validated by the rule compiler (which names the offending field); here only "an object", with the action limits spelt out. */
const RuleBody = {
  type: 'object',
  description:
    'a rule definition, as one entry of a YAML rules file (or with `expression` for a CEL rule). ' +
    `Action limits (integers; beyond them 400): ttl_seconds, window_seconds, group_interval_seconds, repeat_interval_seconds 1-${MAX_WAIT_SECONDS}; ` +
    `group_wait_seconds 0-${MAX_WAIT_SECONDS}; max_count 1-${MAX_ACTIONS_PER_WINDOW}; max_group_size 1-${MAX_GROUP_SIZE}`,
};

function sourceLabel(rule: CompiledRule): string {
  return rule.source.kind === 'api' ? 'api' : `${rule.source.kind}:${rule.source.file}`;
}

export async function rulesRoutes(app: FastifyInstance, opts: { rules: RuleRepository; clock: Clock } & PlaygroundMutes): Promise<void> {
  const { rules, clock } = opts;
  const summary = (rule: CompiledRule) => ({
    name: rule.name,
    priority: rule.priority,
    enabled: rules.isEnabled(rule),
    description: rule.description,
    source: sourceLabel(rule),
    action: rule.actionLabel,
  });
  const detail = (rule: CompiledRule) => ({ ...summary(rule), definition: rule.definition });

  app.get(
    '/v1/rules',
    { config: { access: 'read' }, schema: { tags, summary: 'List rules in evaluation order', response: { 200: responseSchema(RuleList) } } },
    async () => ({
      rules: rules.current.list().map(summary),
    }),
  );

  app.get<{ Params: { name: string } }>(
    '/v1/rules/:name',
    {
      config: { access: 'read' },
      schema: { tags, summary: 'One rule with its definition', params: NameParams, response: { 200: responseSchema(RuleDetail), 404: error } },
    },
    async (request) => {
      const rule = rules.current.get(request.params.name);
      if (!rule) throw errors.notFound('rule', request.params.name);
      return detail(rule);
    },
  );

  app.post(
    '/v1/rules',
    {
      config: manage,
      preHandler: globalScope,
      schema: {
        tags,
        summary: 'Create an API rule (shared by all replicas)',
        body: RuleBody,
        response: { 201: responseSchema(RuleDetail), 400: error, 409: error },
      },
    },
    async (request, reply) => reply.status(201).send(detail(await rules.create(request.body))),
  );

  app.put<{ Params: { name: string } }>(
    '/v1/rules/:name',
    {
      config: manage,
      preHandler: globalScope,
      schema: {
        tags,
        summary: 'Create or replace an API rule',
        params: NameParams,
        body: RuleBody,
        response: { 200: responseSchema(RuleDetail), 201: responseSchema(RuleDetail), 400: error, 409: error },
      },
    },
    async (request, reply) => {
      const { rule, created } = await rules.put(request.params.name, request.body);
      return reply.status(created ? 201 : 200).send(detail(rule));
    },
  );

  app.delete<{ Params: { name: string } }>(
    '/v1/rules/:name',
    {
      config: manage,
      preHandler: globalScope,
      schema: { tags, summary: 'Delete an API rule', params: NameParams, response: { 204: noContent, 404: error, 409: error } },
    },
    async (request, reply) => {
      await rules.remove(request.params.name);
      return reply.status(204).send();
    },
  );

  app.put<{ Params: { name: string }; Body: { enabled: boolean } }>(
    '/v1/rules/:name/enabled',
    {
      config: manage,
      preHandler: globalScope,
      schema: {
        tags,
        summary: 'Enable or disable a rule on every replica',
        params: NameParams,
        body: requestSchema(RuleEnabledInput),
        response: { 200: responseSchema(RuleEnabledResult), 404: error },
      },
    },
    async (request) => {
      await rules.setEnabled(request.params.name, request.body.enabled);
      return { name: request.params.name, enabled: request.body.enabled };
    },
  );

  app.post(
    '/v1/rules/reload',
    {
      config: { access: 'admin' },
      preHandler: globalScope,
      schema: { tags, summary: 'Re-read the rules directory on every replica', response: { 200: responseSchema(RuleReloadResult) } },
    },
    async () => rules.reload(),
  );

  app.post<{ Body: PlaygroundInput }>(
    '/v1/rules/evaluate',
    {
      config: { access: 'read' },
      schema: {
        tags,
        summary: 'Rule playground: evaluate without side effects, with a trace',
        body: requestSchema(PlaygroundInput),
        response: { 200: responseSchema(PlaygroundResult), 400: error },
      },
    },
    async (request) => {
      assertCallerCoversScope(callerOf(request), { tenant: request.body.tenant, namespace: request.body.namespace });
      return evaluatePlayground(rules, request.body, clock, process.env, opts);
    },
  );
}
