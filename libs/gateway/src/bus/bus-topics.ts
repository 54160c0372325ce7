import { BusTopic, errors, isoString, type BusTopicInput, type BusTopicListQuery, type BusTopicParams, type Clock } from '@sluice/core';
import { RecordRepository, type StateKey, type StateStore } from '@sluice/state';
import { decodeWith } from '../policies/schema-decoder.js';

/** Key kinds of topics and of their message logs: never rename without a migration. */
const TOPIC_KIND = 'bus-topic';
const LOG_KIND = 'bus-log';

type StoredTopic = BusTopic & { id: string };
const StoredTopic = BusTopic.extend({ id: BusTopic.shape.topic });

const topicName = (t: BusTopicParams) => `${t.namespace}.${t.tenant}.${t.name}`;

/**
 * The namespace and tenant a topic name belongs to, read from the name alone (neither holds a
 * dot), so grants are checked before the lookup and a 404 never says another tenant's topic
 * exists; null when the name has no three parts (no topic has it).
 */
export function topicScope(name: string): { namespace: string; tenant: string } | null {
  const [namespace, tenant, ...rest] = name.split('.');
  if (!namespace || !tenant || rest.length === 0) return null;
  return { namespace, tenant };
}

/** Where a topic's messages are appended (a Redis Stream in Redis mode). */
export const topicLog = (t: BusTopicParams): StateKey => ({ kind: LOG_KIND, namespace: t.namespace, tenant: t.tenant, id: t.name });

/**
 * Bus topics, `<namespace>.<tenant>.<name>`, shared by every replica. The full name is the
 * record's id, unique across tenants, so a publish finds its topic by name alone. A topic may
 * be bound to one schema version; every publish to it is then validated.
 */
/**
 * With a dot in either, <namespace>.<tenant>.<name> could name two topics of different tenants.
 * Schemas are refused there too: only a topic of the same namespace and tenant can bind one.
 */
export function checkBusScope(scope: { namespace: string; tenant: string }): void {
  if (scope.namespace.includes('.') || scope.tenant.includes('.'))
    throw errors.badRequest(
      'a bus topic’s or schema’s namespace and tenant cannot contain "." (the topic name <namespace>.<tenant>.<name> would be ambiguous)',
    );
}

export class BusTopics {
  private readonly records: RecordRepository<StoredTopic>;

  constructor(
    private readonly state: StateStore,
    private readonly clock: Clock,
  ) {
    this.records = new RecordRepository<StoredTopic>({ state, clock, kind: TOPIC_KIND, label: 'bus topic', decode: decodeWith(StoredTopic), globalIds: true });
  }

  async create(input: BusTopicInput): Promise<BusTopic> {
    checkBusScope(input);
    const topic: BusTopic = {
      topic: topicName(input),
      namespace: input.namespace,
      tenant: input.tenant,
      name: input.name,
      description: input.description ?? null,
      schema_subject: null,
      schema_version: null,
      created_at: isoString(this.clock.now()),
    };
    if ((await this.records.create({ id: topic.topic, ...topic })) !== 'created') throw errors.conflict(`bus topic already exists: ${topic.topic}`);
    return topic;
  }

  async list(query: BusTopicListQuery, visible: (t: BusTopic) => boolean): Promise<{ topics: BusTopic[]; count: number }> {
    const topics = (await this.records.listIn(query)).map(publicForm).filter(visible);
    return { topics, count: topics.length };
  }

  /** The topic of a full name (what publish names); 404 when there is none. */
  async find(name: string): Promise<BusTopic> {
    const found = await this.records.find(name);
    if (!found) throw errors.notFound('bus topic', name);
    return publicForm(found.record);
  }

  /** When the topic of this full name was created (which incarnation it is); null when there is none. */
  async createdAt(name: string): Promise<string | null> {
    return (await this.records.find(name))?.record.created_at ?? null;
  }

  /** Whether a topic of this full name exists. */
  async exists(name: string): Promise<boolean> {
    return (await this.records.find(name)) !== null;
  }

  /** Deletes the topic and its messages; returns its full name. */
  async remove(params: BusTopicParams): Promise<string> {
    const name = topicName(params);
    if (!(await this.records.remove({ namespace: params.namespace, tenant: params.tenant, id: name }))) throw errors.notFound('bus topic', name);
    await this.state.delete(topicLog(params));
    return name;
  }

  /** Binds (or, with null, unbinds) a schema version; the caller checked that it exists. */
  async bind(params: BusTopicParams, schema: { subject: string; version: number } | null): Promise<BusTopic> {
    const updated = await this.records.update({ namespace: params.namespace, tenant: params.tenant, id: topicName(params) }, (t) => ({
      ...t,
      schema_subject: schema?.subject ?? null,
      schema_version: schema?.version ?? null,
    }));
    if (!updated) throw errors.notFound('bus topic', topicName(params));
    return publicForm(updated.record);
  }

  /** Unbinds the topic if it is still bound to this version (a bind undoing itself). */
  async unbindFrom(params: BusTopicParams, schema: { subject: string; version: number }): Promise<void> {
    await this.records.update({ namespace: params.namespace, tenant: params.tenant, id: topicName(params) }, (t) =>
      t.schema_subject === schema.subject && t.schema_version === schema.version ? { ...t, schema_subject: null, schema_version: null } : t,
    );
  }

  /** The topic bound to this schema version, if any (a pinned version cannot be deleted). */
  async pinnedBy(schema: { namespace: string; tenant: string; subject: string; version: number }): Promise<string | null> {
    const { records } = await this.records.list({ namespace: schema.namespace, tenant: schema.tenant });
    return records.find((s) => s.record.schema_subject === schema.subject && s.record.schema_version === schema.version)?.record.topic ?? null;
  }
}

function publicForm(stored: StoredTopic): BusTopic {
  const { id: _id, ...topic } = stored;
  return topic;
}
