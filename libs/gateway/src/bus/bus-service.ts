import {
  SluiceError,
  errors,
  isoString,
  type BusPublishInput,
  type BusSubscription,
  type BusSubscriptionInput,
  type BusSchemaVersionParams,
  type BusTopic,
  type BusTopicParams,
  type Clock,
} from '@sluice/core';
import type { StateStore } from '@sluice/state';
import { BusSubscriptions } from './bus-subscriptions.js';
import { BusTopics, topicLog } from './bus-topics.js';
import { BusSchemaRegistry, schemaId, versionNotFound } from './schema-registry.js';
import { SchemaValidators } from './schema-validators.js';

export interface BusServiceDeps {
  state: StateStore;
  clock: Clock;
  /** Each topic's log keeps about this many messages (Redis `MAXLEN ~`). */
  maxLen: number;
  /** Compiled validators kept (LRU). */
  validatorCacheSize: number;
  visibilityTimeoutMs: number;
  maxDeliveries: number;
  /** A subscription's consumer holding nothing, idle this long, is forgotten (default 10 minutes, at least twice the visibility timeout). */
  forgetIdleConsumersAfterMs?: number;
}

export interface Published {
  topic: string;
  message_id: string;
  validated: boolean;
  subject: string | null;
  version: number | null;
}

/**
 * The message bus: schemas, topics, and publishing (validated against the topic's bound schema
 * version, then appended to the topic's log). Everything is in the state store, shared by all
 * replicas and kept across restarts.
 */
export class BusService {
  readonly schemas: BusSchemaRegistry;
  readonly topics: BusTopics;
  readonly subscriptions: BusSubscriptions;
  private readonly validators: SchemaValidators;

  constructor(private readonly deps: BusServiceDeps) {
    this.validators = new SchemaValidators(deps.validatorCacheSize);
    this.schemas = new BusSchemaRegistry(deps.state, deps.clock, this.validators);
    this.topics = new BusTopics(deps.state, deps.clock);
    this.subscriptions = new BusSubscriptions({
      state: deps.state,
      clock: deps.clock,
      visibilityTimeoutMs: deps.visibilityTimeoutMs,
      maxDeliveries: deps.maxDeliveries,
      forgetIdleAfterMs: deps.forgetIdleConsumersAfterMs,
    });
  }

  /**
   * Subscribes to a topic. The topic is looked at again once the subscription is stored: a delete
   * of the topic on another replica meanwhile either lists the subscription (and removes it) or is
   * seen here, and the subscription undone (404). None outlives its topic.
   */
  async subscribe(topic: BusTopic, input: BusSubscriptionInput): Promise<BusSubscription> {
    const subscription = await this.subscriptions.create(topic, input);
    if (await this.topics.exists(topic.topic)) return subscription;
    await this.subscriptions.removeOf(topic);
    throw errors.notFound('bus topic', topic.topic);
  }

  /** Deletes a topic, its messages and its subscriptions (404 when it does not exist). */
  async removeTopic(params: BusTopicParams): Promise<void> {
    const topic = await this.topics.remove(params);
    await this.subscriptions.removeOf({ namespace: params.namespace, tenant: params.tenant, topic });
  }

  /** 409 while a topic is bound to the version. */
  async deleteSchema(params: BusSchemaVersionParams): Promise<void> {
    await this.schemas.remove(params, () => this.topics.pinnedBy(params));
  }

  /**
   * Binds a topic to an existing schema version of its own namespace and tenant (404 otherwise).
   * The version is touched after the binding is written: a delete that read it before fails its
   * compare-and-swap and looks for bindings again; one that removed it first makes this bind undo
   * itself (404). A topic is never left bound to a deleted version.
   */
  async bind(params: BusTopicParams, schema: { subject: string; version: number }): Promise<BusTopic> {
    const version = { namespace: params.namespace, tenant: params.tenant, ...schema };
    await this.schemas.get(version);
    const bound = await this.topics.bind(params, schema);
    if (await this.schemas.touch(version)) return bound;
    await this.topics.unbindFrom(params, schema);
    throw versionNotFound(version);
  }

  /** 400 `{error, subject, version, issues}` when the bound schema refuses the payload. */
  async publish(topic: BusTopic, input: BusPublishInput): Promise<Published> {
    const { schema_subject: subject, schema_version: version } = topic;
    if (subject !== null && version !== null) {
      const schema = await this.schemas.get({ namespace: topic.namespace, tenant: topic.tenant, subject, version });
      const key = `${topic.namespace}\u0000${topic.tenant}\u0000${schemaId(subject, version)}`;
      const issues = this.validators.issues(key, schema.body, input.payload);
      if (issues.length > 0) {
        throw new SluiceError('BAD_REQUEST', `payload does not match schema ${subject} version ${version}`, { extra: { subject, version, issues } });
      }
    }
    const message = JSON.stringify({ payload: input.payload ?? null, published_at: isoString(this.deps.clock.now()) });
    const message_id = await this.deps.state.logAppend(topicLog(topic), message, this.deps.maxLen);
    await this.takeBackIfDeleted(topic, message_id);
    return { topic: topic.topic, message_id, validated: subject !== null, subject, version };
  }

  /**
   * A delete of the topic that landed between its read and the append removed the topic's log
   * before the append made it again: the message would wait there for a topic created later under
   * the name. It is taken back (the whole log when no topic has the name) and the publish is 404.
   */
  private async takeBackIfDeleted(topic: BusTopic, messageId: string): Promise<void> {
    const now = await this.topics.createdAt(topic.topic);
    if (now === topic.created_at) return;
    if (now === null) await this.deps.state.delete(topicLog(topic));
    else await this.deps.state.logRemove(topicLog(topic), [messageId]);
    throw errors.notFound('bus topic', topic.topic);
  }

  /** The topic a publish names; 404 when it does not exist. */
  topicOf(name: string): Promise<BusTopic> {
    if (!name) throw errors.badRequest('topic is required');
    return this.topics.find(name);
  }
}
