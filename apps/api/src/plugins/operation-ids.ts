import type { FastifyInstance } from 'fastify';

/**
 * The OpenAPI operationId of every documented route, by `METHOD path`: the names client
 * generators (openapi-generator, Kiota, oapi-codegen) give their methods. Kept in one table so
 * the names read as one vocabulary (list/get/create/update/put/delete + the resource); a route
 * left out refuses to register, so a new route cannot ship without one. Changing a name breaks
 * generated clients: treat it as an API change.
 */
export const OPERATION_IDS: Readonly<Record<string, string>> = {
  'GET /health': 'getHealth',
  'GET /ready': 'getReadiness',
  'GET /metrics': 'getMetrics',
  'GET /metrics/prometheus': 'getPrometheusMetrics',
  'POST /v1/auth/login': 'login',
  'POST /v1/auth/logout': 'logout',
  'GET /v1/auth/me': 'getCurrentCaller',
  'POST /v1/dispatch': 'dispatch',
  'POST /v1/dispatch/batch': 'dispatchBatch',
  'POST /api/v2/alerts': 'postAlertmanagerAlerts',
  'POST /v1/integrations/alertmanager': 'receiveAlertmanagerWebhook',
  'GET /api/v2/status': 'getAlertmanagerStatus',
  'GET /api/v2/silences': 'listAlertmanagerSilences',
  'POST /api/v2/silences': 'postAlertmanagerSilence',
  'GET /api/v2/silence/{silenceID}': 'getAlertmanagerSilence',
  'DELETE /api/v2/silence/{silenceID}': 'deleteAlertmanagerSilence',
  'POST /v1/quotas': 'createQuota',
  'GET /v1/quotas': 'listQuotas',
  'GET /v1/quotas/{id}': 'getQuota',
  'PUT /v1/quotas/{id}': 'updateQuota',
  'DELETE /v1/quotas/{id}': 'deleteQuota',
  'GET /v1/quotas/{id}/usage': 'getQuotaUsage',
  'POST /v1/retention': 'createRetentionPolicy',
  'GET /v1/retention': 'listRetentionPolicies',
  'GET /v1/retention/{id}': 'getRetentionPolicy',
  'PUT /v1/retention/{id}': 'updateRetentionPolicy',
  'DELETE /v1/retention/{id}': 'deleteRetentionPolicy',
  'GET /v1/audit': 'listAuditRecords',
  'GET /v1/audit/{action_id}': 'getAuditRecord',
  'POST /v1/audit/verify': 'verifyAuditChain',
  'POST /v1/audit/{action_id}/replay': 'replayAuditRecord',
  'POST /v1/audit/replay': 'replayAuditRecords',
  'GET /v1/compliance/status': 'getComplianceStatus',
  'GET /v1/analytics': 'getAnalytics',
  'GET /v1/events': 'listEvents',
  'GET /v1/events/{fingerprint}': 'getEvent',
  'PUT /v1/events/{fingerprint}/transition': 'transitionEvent',
  'GET /v1/groups': 'listGroups',
  'GET /v1/groups/{group_key}': 'getGroup',
  'DELETE /v1/groups/{group_key}': 'flushGroup',
  'POST /v1/recurring': 'createRecurringAction',
  'GET /v1/recurring': 'listRecurringActions',
  'GET /v1/recurring/{id}': 'getRecurringAction',
  'PUT /v1/recurring/{id}': 'updateRecurringAction',
  'DELETE /v1/recurring/{id}': 'deleteRecurringAction',
  'POST /v1/recurring/{id}/pause': 'pauseRecurringAction',
  'POST /v1/recurring/{id}/resume': 'resumeRecurringAction',
  'GET /v1/approvals': 'listApprovals',
  'GET /v1/approvals/{namespace}/{tenant}/{id}': 'getApproval',
  'POST /v1/approvals/{namespace}/{tenant}/{id}/approve': 'approveByLink',
  'POST /v1/approvals/{namespace}/{tenant}/{id}/reject': 'rejectByLink',
  'POST /v1/approvals/{namespace}/{tenant}/{id}/decision': 'decideApproval',
  'GET /v1/chains': 'listChainRuns',
  'GET /v1/chains/{id}': 'getChainRun',
  'POST /v1/chains/{id}/cancel': 'cancelChainRun',
  'GET /v1/chains/{id}/dag': 'getChainRunDag',
  'GET /v1/chains/definitions': 'listChainDefinitions',
  'POST /v1/chains/definitions': 'createChainDefinition',
  'GET /v1/chains/definitions/{name}': 'getChainDefinition',
  'PUT /v1/chains/definitions/{name}': 'putChainDefinition',
  'DELETE /v1/chains/definitions/{name}': 'deleteChainDefinition',
  'GET /v1/chains/definitions/{name}/dag': 'getChainDefinitionDag',
  'POST /v1/embeddings/similarity': 'computeSimilarity',
  'GET /v1/plugins': 'listPlugins',
  'POST /v1/silences': 'createSilence',
  'GET /v1/silences': 'listSilences',
  'GET /v1/silences/{id}': 'getSilence',
  'PUT /v1/silences/{id}': 'updateSilence',
  'DELETE /v1/silences/{id}': 'deleteSilence',
  'POST /v1/silences/{id}/expire': 'expireSilence',
  'POST /v1/silences/{id}/extend': 'extendSilence',
  'POST /v1/time-intervals': 'createTimeInterval',
  'GET /v1/time-intervals': 'listTimeIntervals',
  'GET /v1/time-intervals/{name}': 'getTimeInterval',
  'PUT /v1/time-intervals/{name}': 'updateTimeInterval',
  'DELETE /v1/time-intervals/{name}': 'deleteTimeInterval',
  'GET /v1/rules': 'listRules',
  'POST /v1/rules': 'createRule',
  'GET /v1/rules/{name}': 'getRule',
  'PUT /v1/rules/{name}': 'putRule',
  'DELETE /v1/rules/{name}': 'deleteRule',
  'PUT /v1/rules/{name}/enabled': 'setRuleEnabled',
  'POST /v1/rules/reload': 'reloadRules',
  'POST /v1/rules/evaluate': 'evaluateRules',
  'GET /v1/rules/coverage': 'getRuleCoverage',
  'GET /v1/dlq': 'listDeadLetters',
  'GET /v1/dlq/stats': 'getDeadLetterStats',
  'GET /v1/dlq/{id}': 'getDeadLetter',
  'POST /v1/dlq/{id}/retry': 'retryDeadLetter',
  'POST /v1/dlq/drain': 'drainDeadLetters',
  'GET /admin/circuit-breakers': 'listCircuitBreakers',
  'POST /admin/circuit-breakers/{provider}/trip': 'tripCircuitBreaker',
  'POST /admin/circuit-breakers/{provider}/reset': 'resetCircuitBreaker',
  'GET /v1/providers/health': 'getProvidersHealth',
  'GET /v1/stream': 'streamEvents',
  'POST /v1/bus/schemas': 'registerBusSchema',
  'GET /v1/bus/schemas': 'listBusSchemas',
  'GET /v1/bus/schemas/{namespace}/{tenant}/{subject}': 'listBusSchemaVersions',
  'GET /v1/bus/schemas/{namespace}/{tenant}/{subject}/{version}': 'getBusSchema',
  'DELETE /v1/bus/schemas/{namespace}/{tenant}/{subject}/{version}': 'deleteBusSchema',
  'POST /v1/bus/topics': 'createBusTopic',
  'GET /v1/bus/topics': 'listBusTopics',
  'DELETE /v1/bus/topics/{namespace}/{tenant}/{name}': 'deleteBusTopic',
  'PUT /v1/bus/topics/{namespace}/{tenant}/{name}/schema': 'bindBusTopicSchema',
  'DELETE /v1/bus/topics/{namespace}/{tenant}/{name}/schema': 'unbindBusTopicSchema',
  'POST /v1/bus/publish': 'publishBusMessage',
  'POST /v1/bus/subscriptions': 'createBusSubscription',
  'GET /v1/bus/subscriptions/{id}': 'getBusSubscription',
  'GET /v1/bus/subscriptions/{id}/messages': 'receiveBusMessages',
  'POST /v1/bus/subscriptions/{id}/ack': 'ackBusMessages',
  'GET /v1/bus/subscriptions/{id}/lag': 'getBusSubscriptionLag',
  'GET /v1/bus/subscriptions/{id}/dead-letters': 'listBusDeadLetters',
};

/** Fastify's `:param` as OpenAPI's `{param}`, the form the table (and the document) uses. */
function openApiPath(url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/** Names each documented route's operation from OPERATION_IDS. Registered before the OpenAPI plugin, which copies each route as it is added. */
export function installOperationIds(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    if (route.schema === undefined || route.schema.hide === true) return;
    const methods = [route.method].flat().filter((m) => m !== 'HEAD');
    if (methods.length !== 1) return; // no documented route answers several methods
    const key = `${methods[0]} ${openApiPath(route.url)}`;
    const operationId = OPERATION_IDS[key];
    if (operationId === undefined) throw new Error(`route ${key} has no operationId: add one to OPERATION_IDS (apps/api/src/plugins/operation-ids.ts)`);
    route.schema = { ...route.schema, operationId };
  });
}
