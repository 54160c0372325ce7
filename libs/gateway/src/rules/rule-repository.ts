import { errors, type Clock } from '@sluice/core';
import {
  RuleDefinitionError,
  RuleSet,
  compileRuleDefinition,
  formatRuleSource,
  loadRuleDirectory,
  type CompileEnv,
  type CompiledRule,
  type RuleLoadError,
} from '@sluice/rules';
import { GenerationSync, type StateStore } from '@sluice/state';
import type { Logger } from '@sluice/telemetry';
import { pluginProblems, type PluginCheck } from './plugin-references.js';
import { RULES_CHANNEL, RULES_GENERATION_KEY, apiRuleKey, enabledFlagKey } from './rule-keys.js';
import { readAllGlobal } from './shared-rules.js';

export interface RuleRepositoryDeps {
  state: StateStore;
  clock: Clock;
  directory: string | null;
  env: CompileEnv;
  logger: Logger;
  syncIntervalMs: number;
  /** Which time-interval names exist (in any scope): rules naming others are reported at load. */
  intervals?: { readonly current: { defines(name: string): boolean } };
  /** Re-reads the WASM plugin directory (on reload, before the rules that use them); returns the files that did not load. */
  reloadPlugins?: () => Promise<{ file: string; message: string }[]>;
  /** Whether a `wasm_plugin` condition can run here: rules naming a plugin or function not loaded are reported (refused through the API). */
  plugins?: PluginCheck;
}

/** The sync tag of `POST /v1/rules/reload`: every replica re-reads its rules directory too. */
const RELOAD_TAG = 'reload';

/**
 * The rules one replica evaluates: file rules (read from its own rules directory) plus API rules
 * and enabled flags (shared through the StateStore). Any edit bumps a shared generation and is
 * broadcast; every replica rebuilds its compiled RuleSet on the message, and polls the generation
 * as a backstop. The RuleSet is swapped atomically, so a dispatch never sees half a reload.
 */
export class RuleRepository {
  private fileRules: CompiledRule[] = [];
  private fileErrors: RuleLoadError[] = [];
  private pluginErrors: RuleLoadError[] = [];
  private apiRules: CompiledRule[] = [];
  private flags = new Map<string, boolean>();
  private ruleSet = new RuleSet([]);
  private readonly sync: GenerationSync;

  constructor(private readonly deps: RuleRepositoryDeps) {
    this.sync = new GenerationSync({
      state: deps.state,
      clock: deps.clock,
      generationKey: RULES_GENERATION_KEY,
      channel: RULES_CHANNEL,
      intervalMs: deps.syncIntervalMs,
      log: deps.logger,
      reload: async (tag) => {
        if (tag === RELOAD_TAG) {
          this.pluginErrors = (await this.deps.reloadPlugins?.()) ?? [];
          await this.reloadFiles();
        }
        await this.refreshShared();
      },
    });
  }

  get current(): RuleSet {
    return this.ruleSet;
  }

  get loadErrors(): readonly RuleLoadError[] {
    return this.fileErrors;
  }

  /**
   * The live enabled flag: a shared override, else the rule's own `enabled`. Asked of every rule
   * of every dispatch; most deployments override none, and then no lookup by name is made.
   */
  readonly isEnabled = (rule: CompiledRule): boolean => (this.flags.size === 0 ? rule.enabled : (this.flags.get(rule.name) ?? rule.enabled));

  async start(): Promise<void> {
    await this.reloadFiles();
    await this.sync.start();
  }

  close(): Promise<void> {
    return this.sync.close();
  }

  /** Creates an API rule; 409 when any rule (file or API) already has the name. */
  async create(definition: unknown): Promise<CompiledRule> {
    const rule = this.compile(definition);
    this.refuseMissingPlugins(rule);
    if (this.ruleSet.get(rule.name)) throw errors.conflict(`rule already exists: ${rule.name}`);
    const created = await this.deps.state.setIfAbsent(apiRuleKey(rule.name), JSON.stringify(rule.definition));
    if (!created) throw errors.conflict(`rule already exists: ${rule.name}`);
    await this.forgetEnabledFlag(rule.name);
    await this.sync.announce();
    return rule;
  }

  /** Creates or replaces an API rule. File rules cannot be replaced through the API. */
  async put(name: string, definition: unknown): Promise<{ rule: CompiledRule; created: boolean }> {
    const body = typeof definition === 'object' && definition !== null ? { name, ...definition } : definition;
    const rule = this.compile(body);
    if (rule.name !== name) throw errors.badRequest(`rule name in the body (${rule.name}) differs from the path (${name})`);
    this.refuseFileRule(name, 'replaced');
    this.refuseMissingPlugins(rule);
    // Whether the rule is new is the shared store's to say, not this replica's copy (a rule just
    // made on another replica is not in it yet: taken for new, its disable flag was dropped).
    const text = JSON.stringify(rule.definition);
    const created = await this.deps.state.setIfAbsent(apiRuleKey(name), text);
    if (created) await this.forgetEnabledFlag(name);
    else await this.deps.state.set(apiRuleKey(name), text);
    await this.sync.announce();
    return { rule, created };
  }

  async remove(name: string): Promise<void> {
    this.refuseFileRule(name, 'deleted');
    const deleted = await this.deps.state.delete(apiRuleKey(name));
    if (!deleted) throw errors.notFound('rule', name);
    await this.forgetEnabledFlag(name);
    await this.sync.announce();
  }

  async setEnabled(name: string, enabled: boolean): Promise<void> {
    // An API rule made on another replica a moment ago is in the shared store before it is here.
    if (!this.ruleSet.get(name) && (await this.deps.state.get(apiRuleKey(name))) === null) throw errors.notFound('rule', name);
    await this.deps.state.set(enabledFlagKey(name), enabled ? '1' : '0');
    // An API rule deleted on another replica meanwhile: its flag must not outlive it (the next rule of that name would inherit it).
    const fileRule = this.fileRules.some((r) => r.name === name);
    if (!fileRule && (await this.deps.state.get(apiRuleKey(name))) === null) {
      await this.forgetEnabledFlag(name);
      throw errors.notFound('rule', name);
    }
    await this.sync.announce();
  }

  /**
   * Drops a rule's enabled flag: with its API rule's delete, and at a new API rule of the name (a
   * flag left by a disable that raced the delete of an earlier one must not carry over).
   */
  private async forgetEnabledFlag(name: string): Promise<void> {
    await this.deps.state.delete(enabledFlagKey(name));
  }

  /** Re-reads the plugin and rules directories here and on every other replica; the errors include plugins that did not load and rules naming time intervals no scope defines. */
  async reload(): Promise<{ loaded: number; errors: RuleLoadError[] }> {
    await this.sync.announce(RELOAD_TAG);
    return {
      loaded: this.ruleSet.list().length,
      errors: [...this.pluginErrors, ...this.fileErrors, ...this.unknownIntervals(), ...this.missingPlugins()],
    };
  }

  /** Loaded rules with a `wasm_plugin` condition that cannot run (it is false at every dispatch until the plugin loads). */
  private missingPlugins(): RuleLoadError[] {
    const check = this.deps.plugins;
    if (!check) return [];
    return this.ruleSet.list().flatMap((rule) =>
      pluginProblems(rule.definition, check).map((p) => ({
        file: formatRuleSource(rule.source),
        rule: rule.name,
        message: `${p.path}: ${p.message}; the condition is false until it loads`,
      })),
    );
  }

  /** An API rule naming a plugin or function this replica has not loaded: 400, the condition could never match. */
  private refuseMissingPlugins(rule: CompiledRule): void {
    const problems = this.deps.plugins ? pluginProblems(rule.definition, this.deps.plugins) : [];
    if (problems.length > 0) throw errors.validation(problems);
  }

  /**
   * Loaded rules that name a time interval no scope defines. They still load: an unknown mute
   * interval is ignored and an unknown active interval counts as outside, until it is created.
   */
  private unknownIntervals(): RuleLoadError[] {
    const intervals = this.deps.intervals?.current;
    if (!intervals) return [];
    const problems: RuleLoadError[] = [];
    for (const rule of this.ruleSet.list()) {
      const fields = [
        ['mute_time_intervals', rule.muteTimeIntervals, 'ignored'],
        ['active_time_intervals', rule.activeTimeIntervals, 'the rule counts as outside it, so matching actions are suppressed'],
      ] as const;
      for (const [field, names, effect] of fields) {
        for (const name of names) {
          if (intervals.defines(name)) continue;
          problems.push({
            file: formatRuleSource(rule.source),
            rule: rule.name,
            message: `${field}: no time interval named "${name}" exists; ${effect} until one is created`,
          });
        }
      }
    }
    return problems;
  }

  private compile(definition: unknown): CompiledRule {
    try {
      return compileRuleDefinition(definition, { kind: 'api' }, this.deps.env);
    } catch (err) {
      if (err instanceof RuleDefinitionError) throw errors.validation(err.details);
      throw err;
    }
  }

  private refuseFileRule(name: string, verb: string): void {
    const fileRule = this.fileRules.find((r) => r.name === name);
    if (fileRule) throw errors.conflict(`rule ${name} is defined in a rule file and cannot be ${verb} through the API`);
  }

  private async reloadFiles(): Promise<void> {
    if (!this.deps.directory) return;
    const { rules, errors: problems } = await loadRuleDirectory(this.deps.directory, this.deps.env);
    this.fileRules = rules;
    this.fileErrors = problems;
    for (const p of problems) this.deps.logger.warn({ file: p.file, rule: p.rule, reason: p.message }, 'rule not loaded');
    this.rebuild();
  }

  /** Reads API rules and enabled flags from state; a stored rule that no longer compiles is logged and skipped. */
  private async refreshShared(): Promise<void> {
    const [stored, flags] = await Promise.all([readAllGlobal(this.deps.state, 'rule'), readAllGlobal(this.deps.state, 'rule-enabled')]);
    const apiRules: CompiledRule[] = [];
    for (const [name, json] of stored) {
      try {
        apiRules.push(this.compile(JSON.parse(json) as unknown));
      } catch (err) {
        this.deps.logger.error({ rule: name, err }, 'stored API rule does not compile; skipped');
      }
    }
    this.apiRules = apiRules;
    this.flags = new Map([...flags].map(([name, v]) => [name, v === '1']));
    this.rebuild();
  }

  private rebuild(): void {
    const fileNames = new Set(this.fileRules.map((r) => r.name));
    const shadowed = this.apiRules.filter((r) => fileNames.has(r.name));
    for (const r of shadowed) this.deps.logger.warn({ rule: r.name }, 'API rule shadowed by a file rule of the same name');
    this.ruleSet = new RuleSet([...this.fileRules, ...this.apiRules.filter((r) => !fileNames.has(r.name))]);
    this.reportLoadProblems();
  }

  /** Logs what unknownIntervals() and missingPlugins() find, after every rebuild (time intervals and plugins load first, at start-up). */
  private reportLoadProblems(): void {
    for (const p of this.unknownIntervals()) this.deps.logger.warn({ file: p.file, rule: p.rule, reason: p.message }, 'rule names an unknown time interval');
    for (const p of this.missingPlugins()) this.deps.logger.warn({ file: p.file, rule: p.rule, reason: p.message }, 'rule names a plugin that is not loaded');
  }
}
