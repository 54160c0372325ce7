import { ConfigError } from '@sluice/config';
import { ChainDefinition, errors, type ChainDag, type ChainDefinitionView, type Clock } from '@sluice/core';
import { RecordRepository, type StateStore } from '@sluice/state';
import type { Logger } from '@sluice/telemetry';
import { checkDefinition, cycleFrom } from './chain-checks.js';
import { definitionDag } from './chain-dag.js';

/** The key kind of API chain definitions: never rename without a migration. */
const CHAIN_DEFINITION_KIND = 'chain-definition';
/** Definitions are global (any tenant's rule may start any chain): one scope holds them all. */
const GLOBAL = { namespace: '_', tenant: '_' } as const;

interface StoredDefinition {
  id: string;
  namespace: string;
  tenant: string;
  definition: ChainDefinition;
}

function decodeStored(raw: unknown): StoredDefinition | null {
  const r = raw as Partial<StoredDefinition> | null;
  const parsed = ChainDefinition.safeParse(r?.definition);
  if (!parsed.success || typeof r?.id !== 'string' || r.id !== parsed.data.name) return null;
  return { id: r.id, ...GLOBAL, definition: parsed.data };
}

export interface ChainDefinitionsDeps {
  state: StateStore;
  clock: Clock;
  logger: Logger;
  /** From `chains.definitions`: read-only through the API. */
  configured: readonly ChainDefinition[];
  providerExists(name: string): boolean;
  syncIntervalMs: number;
}

/**
 * Chain definitions: the config's, and the API's shared by every replica (each keeps a snapshot,
 * reloaded on any replica's write). Every definition is checked against the others: its
 * providers and sub-chains exist, and no chain reaches itself through sub-chains.
 */
export class ChainDefinitions {
  private all: ReadonlyMap<string, ChainDefinition>;
  private readonly configNames: ReadonlySet<string>;
  private readonly records: RecordRepository<StoredDefinition>;
  private readonly log: Logger;

  constructor(private readonly deps: ChainDefinitionsDeps) {
    this.log = deps.logger.child({ component: 'chains' });
    this.configNames = new Set(deps.configured.map((d) => d.name));
    this.all = new Map(deps.configured.map((d) => [d.name, d]));
    checkConfigured(deps.configured, this.all, deps.providerExists);
    this.records = new RecordRepository<StoredDefinition>({
      state: deps.state,
      clock: deps.clock,
      kind: CHAIN_DEFINITION_KIND,
      label: 'chain definition',
      decode: decodeStored,
      sync: { intervalMs: deps.syncIntervalMs, log: this.log, reload: () => this.refresh() },
    });
  }

  start(): Promise<void> {
    return this.records.start();
  }

  close(): Promise<void> {
    return this.records.close();
  }

  /** The definition a `chain` rule action starts, if it exists. */
  find(name: string): ChainDefinition | undefined {
    return this.all.get(name);
  }

  list(): { definitions: ChainDefinitionView[]; count: number } {
    const definitions = [...this.all.values()].map((d) => this.view(d));
    return { definitions, count: definitions.length };
  }

  get(name: string): ChainDefinitionView {
    const def = this.all.get(name);
    if (!def) throw errors.notFound('chain definition', name);
    return this.view(def);
  }

  dag(name: string): ChainDag {
    if (!this.all.has(name)) throw errors.notFound('chain definition', name);
    return definitionDag(name, this.all);
  }

  /** 409 when the name exists (config or API); 400 naming what does not check out. */
  async create(def: ChainDefinition): Promise<ChainDefinitionView> {
    if (this.all.has(def.name)) throw errors.conflict(`chain definition already exists: ${def.name}`);
    this.check(def);
    if ((await this.records.create({ id: def.name, ...GLOBAL, definition: def })) !== 'created')
      throw errors.conflict(`chain definition already exists: ${def.name}`);
    await this.undoIfBroken(def, () => this.records.remove({ ...GLOBAL, id: def.name }));
    return this.view(def);
  }

  /** Creates or replaces an API definition; `created` says which. */
  async put(name: string, def: ChainDefinition): Promise<{ view: ChainDefinitionView; created: boolean }> {
    if (def.name !== name) throw errors.badRequest(`the definition's name (${def.name}) differs from the path (${name})`);
    this.refuseConfigured(name, 'replaced');
    this.check(def);
    let previous: ChainDefinition | undefined;
    const updated = await this.records.update({ ...GLOBAL, id: name }, (stored) => {
      previous = stored.definition;
      return { ...stored, definition: def };
    });
    if (!updated) return { view: await this.create(def), created: true };
    const before = previous as ChainDefinition;
    await this.undoIfBroken(def, () => this.records.update({ ...GLOBAL, id: name }, (stored) => ({ ...stored, definition: before })));
    return { view: this.view(def), created: false };
  }

  /**
   * Each write is checked against this replica's copy, so two written at once on two replicas
   * can together close a cycle neither would alone, or name a sub_chain the other deletes. After
   * its write (the copy reloaded from the store by then), a write that now closes a cycle or
   * names a sub_chain that is gone is undone and refused: of two racing writes at least the later
   * one sees the other, so neither stays stored (both may be refused: try again).
   */
  private async undoIfBroken(def: ChainDefinition, undo: () => Promise<unknown>): Promise<void> {
    const gone = def.steps.findIndex((s) => s.sub_chain !== undefined && !this.all.has(s.sub_chain));
    const cycle = gone === -1 ? cycleFrom(def.name, this.all) : null;
    if (gone === -1 && cycle === null) return;
    await undo();
    throw errors.validation([
      gone === -1
        ? { path: 'steps', message: `sub_chain cycle: ${(cycle as string[]).join(' → ')} (another definition was written at the same time)` }
        : { path: `steps.${gone}.sub_chain`, message: `chain ${def.steps[gone]?.sub_chain} was deleted at the same time` },
    ]);
  }

  /**
   * 409 while another definition names it as a sub-chain. A definition naming it written on
   * another replica at the same time is seen after the delete (the copy reloaded by then): the
   * definition is put back and the delete refused the same way.
   */
  async remove(name: string): Promise<void> {
    this.refuseConfigured(name, 'deleted');
    const user = this.userOf(name);
    if (user) throw errors.conflict(`chain definition ${name} is a sub_chain of ${user.name}; change that one first`);
    const removed = this.all.get(name);
    if (!(await this.records.remove({ ...GLOBAL, id: name }))) throw errors.notFound('chain definition', name);
    const lateUser = this.userOf(name);
    if (lateUser === undefined || removed === undefined) return;
    await this.records.create({ id: name, ...GLOBAL, definition: removed });
    throw errors.conflict(`chain definition ${name} is a sub_chain of ${lateUser.name} (written at the same time); change that one first`);
  }

  private userOf(name: string): ChainDefinition | undefined {
    return [...this.all.values()].find((d) => d.name !== name && d.steps.some((s) => s.sub_chain === name));
  }

  private check(def: ChainDefinition): void {
    const next = new Map(this.all);
    next.set(def.name, def);
    const problems = checkDefinition(def, next, this.deps.providerExists);
    if (problems.length > 0) throw errors.validation(problems);
  }

  private refuseConfigured(name: string, verb: string): void {
    if (this.configNames.has(name))
      throw errors.conflict(`chain definition ${name} is defined in the configuration file and cannot be ${verb} through the API`);
  }

  private view(def: ChainDefinition): ChainDefinitionView {
    return { ...def, source: this.configNames.has(def.name) ? 'config' : 'api' };
  }

  private async refresh(): Promise<void> {
    const { records, bad } = await this.records.listAll();
    for (const ref of bad) this.log.error({ chain: ref.id }, 'stored chain definition is unreadable; skipped');
    const api = new Map<string, ChainDefinition>();
    for (const { record } of records) {
      if (this.configNames.has(record.id)) this.log.warn({ chain: record.id }, 'API chain definition shadowed by a config definition; ignored');
      else api.set(record.id, record.definition);
    }
    this.all = new Map([...this.deps.configured.map((d) => [d.name, d] as const), ...api]);
  }
}

/** Config definitions that do not check out stop start-up, naming each problem. */
function checkConfigured(configured: readonly ChainDefinition[], all: ReadonlyMap<string, ChainDefinition>, providerExists: (name: string) => boolean): void {
  const seen = new Set<string>();
  const problems: string[] = [];
  configured.forEach((def, i) => {
    if (seen.has(def.name)) problems.push(`chains.definitions.${i}.name: duplicate chain ${def.name}`);
    seen.add(def.name);
    for (const p of checkDefinition(def, all, providerExists)) problems.push(`chains.definitions.${i}.${p.path}: ${p.message}`);
  });
  if (problems.length > 0) throw new ConfigError(`invalid chain definitions in the configuration:\n  ${problems.join('\n  ')}`);
}
