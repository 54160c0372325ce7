import {
  BusSchema,
  errors,
  isoString,
  type BusSchemaInput,
  type BusSchemaListQuery,
  type BusSchemaVersionParams,
  type BusSubjectParams,
  type Clock,
} from '@sluice/core';
import { RecordRepository, type StateKey, type StateStore } from '@sluice/state';
import { decodeWith } from '../policies/schema-decoder.js';
import type { SchemaValidators } from './schema-validators.js';
import { checkBusScope } from './bus-topics.js';

/** Key kinds of schema versions and of each subject's version counter: never rename without a migration. */
const SCHEMA_KIND = 'bus-schema';
const HEAD_KIND = 'bus-schema-head';
/** Compare-and-swap rounds for a version number; registrations that lose them all are a 409. */
const CAS_ROUNDS = 32;

type StoredSchema = BusSchema & { id: string };
const StoredSchema = BusSchema.extend({ id: BusSchema.shape.subject });

export const schemaId = (subject: string, version: number) => `${subject}:${version}`;

/**
 * The bus's schema registry: immutable, versioned JSON Schemas per (namespace, tenant, subject).
 * A version number comes from the subject's counter, taken by compare-and-swap, so concurrent
 * registrations on any replicas get distinct consecutive versions, and a deleted version's
 * number is never given again.
 */
export class BusSchemaRegistry {
  private readonly records: RecordRepository<StoredSchema>;

  constructor(
    private readonly state: StateStore,
    private readonly clock: Clock,
    private readonly validators: SchemaValidators,
  ) {
    this.records = new RecordRepository<StoredSchema>({ state, clock, kind: SCHEMA_KIND, label: 'bus schema', decode: decodeWith(StoredSchema) });
  }

  /** 400 with the compiler's message when the body is not a schema; 201 with the version it got. */
  async register(input: BusSchemaInput): Promise<BusSchema> {
    checkBusScope(input);
    const problem = this.validators.compileError(input.body);
    if (problem !== null) throw errors.badRequest(`schema body does not compile: ${problem}`);
    const version = await this.nextVersion(input);
    const schema: BusSchema = {
      subject: input.subject,
      version,
      namespace: input.namespace,
      tenant: input.tenant,
      format: 'json_schema_2020_12',
      body: input.body,
      labels: input.labels ?? {},
      created_at: isoString(this.clock.now()),
    };
    const created = await this.records.create({ id: schemaId(input.subject, version), ...schema });
    if (created !== 'created') throw new Error(`bus schema ${input.subject} version ${version} could not be stored (${created})`);
    return schema;
  }

  /** Sorted by namespace, tenant, subject, version. */
  async list(query: BusSchemaListQuery, visible: (s: BusSchema) => boolean): Promise<{ schemas: BusSchema[]; count: number }> {
    const matching = (await this.records.listIn(query))
      .map(publicForm)
      .filter((s) => (query.subject === undefined || s.subject === query.subject) && visible(s))
      .sort(
        (a, b) => a.namespace.localeCompare(b.namespace) || a.tenant.localeCompare(b.tenant) || a.subject.localeCompare(b.subject) || a.version - b.version,
      );
    return { schemas: matching.slice(query.offset, query.offset + query.limit), count: matching.length };
  }

  /** Every version of a subject, oldest first; 404 when it has none. */
  async versions(params: BusSubjectParams): Promise<{ schemas: BusSchema[]; count: number }> {
    const { records } = await this.records.list({ namespace: params.namespace, tenant: params.tenant });
    const schemas = records
      .map((s) => publicForm(s.record))
      .filter((s) => s.subject === params.subject)
      .sort((a, b) => a.version - b.version);
    if (schemas.length === 0) throw errors.notFound('bus schema subject', `${params.namespace}/${params.tenant}/${params.subject}`);
    return { schemas, count: schemas.length };
  }

  async get(params: BusSchemaVersionParams): Promise<BusSchema> {
    const found = await this.records.get(versionRef(params));
    if (!found) throw versionNotFound(params);
    return publicForm(found.record);
  }

  /**
   * 409 while a topic is bound to it. `pinnedBy` is asked after the version is read, and the
   * version is removed only if unchanged since (a bind touches it after writing its binding), so
   * a bind racing the delete either is seen or finds the version gone.
   */
  async remove(params: BusSchemaVersionParams, pinnedBy: () => Promise<string | null>): Promise<void> {
    const ref = versionRef(params);
    for (let round = 0; round < CAS_ROUNDS; round++) {
      const found = await this.records.get(ref);
      if (!found) throw versionNotFound(params);
      const topic = await pinnedBy();
      if (topic !== null) throw errors.conflict(`bus schema ${params.subject} version ${params.version} is bound to topic ${topic}; unbind it first`);
      if (await this.records.removeAt(found)) return;
    }
    throw errors.conflict(`bus schema ${params.subject} version ${params.version} kept changing; try again`);
  }

  /** Marks the version as just used by a binding (a new record version, same content); false when it no longer exists. */
  async touch(params: BusSchemaVersionParams): Promise<boolean> {
    return (await this.records.update(versionRef(params), (schema) => schema)) !== null;
  }

  private async nextVersion(input: BusSubjectParams): Promise<number> {
    const head: StateKey = { kind: HEAD_KIND, namespace: input.namespace, tenant: input.tenant, id: input.subject };
    for (let round = 0; round < CAS_ROUNDS; round++) {
      const current = await this.state.getVersioned(head);
      const next = (current ? Number(JSON.parse(current.value).latest) : 0) + 1;
      if ((await this.state.compareAndSwap(head, current?.version ?? 0, JSON.stringify({ latest: next }))).ok) return next;
    }
    throw errors.conflict(`too many concurrent registrations of ${input.subject}; try again`);
  }
}

function publicForm(stored: StoredSchema): BusSchema {
  const { id: _id, ...schema } = stored;
  return schema;
}

/** Where a schema version's record is. */
function versionRef(params: BusSchemaVersionParams): { namespace: string; tenant: string; id: string } {
  return { namespace: params.namespace, tenant: params.tenant, id: schemaId(params.subject, params.version) };
}

/** The 404 of a schema version that does not exist. */
export function versionNotFound(params: BusSchemaVersionParams): Error {
  return errors.notFound('bus schema', `${params.namespace}/${params.tenant}/${params.subject}/${params.version}`);
}
