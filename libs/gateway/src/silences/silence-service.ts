import {
  MAX_SILENCE_SECONDS,
  StoredSilence,
  errors,
  isoString,
  newId,
  spanOf,
  type Clock,
  type Silence,
  type SilenceCreateInput,
  type SilenceListQuery,
  type SilenceUpdateInput,
} from '@sluice/core';
import { RecordRepository, type StateStore } from '@sluice/state';
import type { Logger } from '@sluice/telemetry';
import { SilenceIndex } from './silence-index.js';
import { compileMatchers } from './silence-matchers.js';
import { toSilence, windowOf } from './silence-record.js';
import { decodeWith } from '../policies/schema-decoder.js';

/** The key kind of silence records (their indexes derive from it): never rename without a migration. */
const SILENCE_KIND = 'silence';
/**
 * Compare-and-swap rounds of an edit before a 409. Extends are additive, so two replicas (or a
 * script) extending one silence at once must all count: a wider budget than the default 8.
 */
const EDIT_ATTEMPTS = 32;

/**
 * How far ahead a silence may reach: ends_at at most MAX_SILENCE_SECONDS after starts_at, or
 * after now once it has started (so a silence can be extended again and again, never more than
 * a year ahead). The same bound as duration_seconds, so ends_at is no way around it.
 */
function checkReach(field: 'ends_at' | 'minutes', startsMs: number, endsMs: number, nowMs: number): void {
  if (endsMs - Math.max(startsMs, nowMs) <= MAX_SILENCE_SECONDS * 1000) return;
  const what = field === 'ends_at' ? 'must be at most' : 'would put ends_at more than';
  throw errors.validation([
    {
      path: field,
      message: `${what} ${MAX_SILENCE_SECONDS} seconds (${spanOf(MAX_SILENCE_SECONDS)}) after starts_at, or after now for a silence that has started`,
    },
  ]);
}

export interface SilenceServiceDeps {
  state: StateStore;
  clock: Clock;
  logger: Logger;
  /** How often replicas poll the shared generation behind pub/sub. */
  syncIntervalMs: number;
}

export interface SilenceListOptions extends Omit<SilenceListQuery, 'limit' | 'offset'>, Partial<Pick<SilenceListQuery, 'limit' | 'offset'>> {
  /** Whether the caller may see a silence (its grants). */
  visible: (silence: StoredSilence) => boolean;
}

/**
 * Silences, shared by every replica: records in the StateStore (ids unique across tenants, so a
 * silence is addressed by id alone), and on each replica a compiled snapshot that every write
 * here refreshes before answering and every other replica refreshes on the broadcast (or, when a
 * message is lost, on its next poll of the generation). Dispatch reads only the snapshot.
 */
export class SilenceService {
  private snapshot = new SilenceIndex([]);
  private readonly records: RecordRepository<StoredSilence>;
  private readonly log: Logger;

  constructor(private readonly deps: SilenceServiceDeps) {
    this.log = deps.logger.child({ component: 'silences' });
    this.records = new RecordRepository<StoredSilence>({
      state: deps.state,
      clock: deps.clock,
      kind: SILENCE_KIND,
      label: 'silence',
      decode: decodeWith(StoredSilence),
      globalIds: true,
      attempts: EDIT_ATTEMPTS,
      sync: { intervalMs: deps.syncIntervalMs, log: this.log, reload: () => this.refresh() },
    });
  }

  /** What dispatch consults: swapped whole on every reload. */
  get current(): SilenceIndex {
    return this.snapshot;
  }

  start(): Promise<void> {
    return this.records.start();
  }

  close(): Promise<void> {
    return this.records.close();
  }

  async create(input: SilenceCreateInput, createdBy: string): Promise<Silence> {
    const compiled = compileMatchers(input.matchers);
    if (!compiled.ok) throw errors.validation(compiled.problems);
    // Alertmanager's rule: matchers that all hold for an action without labels would mute every action of the scope.
    if (compiled.test({})) {
      throw errors.validation([
        { path: 'matchers', message: 'at least one matcher must not match the empty string (these would mute every action of the namespace and tenant)' },
      ]);
    }
    const now = this.deps.clock.now();
    const startsMs = input.starts_at === undefined ? now : Date.parse(input.starts_at);
    const endsMs =
      input.ends_at !== undefined ? Date.parse(input.ends_at) : input.duration_seconds !== undefined ? startsMs + input.duration_seconds * 1000 : null;
    if (endsMs === null) throw errors.badRequest('either ends_at or duration_seconds must be supplied');
    // A silence over before it is made would never mute anything (Alertmanager refuses it too).
    // Checked first: a window already over says so whichever way it is given (/api/v2 moves a past start to now).
    if (endsMs <= now) throw errors.badRequest('ends_at must be in the future');
    if (endsMs <= startsMs) throw errors.badRequest('ends_at must be after starts_at');
    // A silence starts at most as far ahead as it may last: otherwise starts_at (year 9999, say)
    // puts ends_at past what RFC 3339 can write.
    if (startsMs - now > MAX_SILENCE_SECONDS * 1000) {
      throw errors.validation([{ path: 'starts_at', message: `must be at most ${MAX_SILENCE_SECONDS} seconds (${spanOf(MAX_SILENCE_SECONDS)}) from now` }]);
    }
    checkReach('ends_at', startsMs, endsMs, now);
    const at = isoString(now);
    const silence: StoredSilence = {
      id: newId(),
      namespace: input.namespace,
      tenant: input.tenant,
      matchers: input.matchers,
      starts_at: isoString(startsMs),
      ends_at: isoString(endsMs),
      created_by: createdBy,
      comment: input.comment,
      created_at: at,
      updated_at: at,
    };
    // A fresh UUID v7: 'id-taken' would mean a broken id generator, not a user error.
    const result = await this.records.create(silence);
    if (result !== 'created') throw new Error(`silence id ${silence.id} could not be claimed (${result})`);
    return toSilence(silence, now);
  }

  /** A silence, as this replica loaded it or, when it is newer than that, as stored. */
  async get(id: string): Promise<Silence> {
    return toSilence(await this.stored(id), this.deps.clock.now());
  }

  /**
   * The stored form (for scope checks before a change); 404 when unknown. A silence created on
   * another replica a moment ago may not have reached this one's snapshot yet (the broadcast is
   * on its way): a miss reads it from the store. The snapshot itself is left to the sync, whose
   * reloads run one after another (one started here could finish last and install older data).
   */
  async stored(id: string): Promise<StoredSilence> {
    const known = this.snapshot.get(id);
    if (known) return known;
    const found = await this.records.find(id);
    if (!found) throw errors.notFound('silence', id);
    return found.record;
  }

  /** Filters by exact namespace and tenant; expired silences only with include_expired. Oldest first. */
  list(opts: SilenceListOptions): { silences: Silence[]; count: number } {
    const now = this.deps.clock.now();
    const silences: Silence[] = [];
    for (const stored of this.snapshot.all) {
      if (opts.namespace !== undefined && stored.namespace !== opts.namespace) continue;
      if (opts.tenant !== undefined && stored.tenant !== opts.tenant) continue;
      if (!opts.include_expired && windowOf(stored).endsMs <= now) continue;
      if (!opts.visible(stored)) continue;
      silences.push(toSilence(stored, now));
    }
    // One page when asked (the API); every match otherwise (Alertmanager's API does not page).
    const offset = opts.offset ?? 0;
    return { silences: opts.limit === undefined ? silences.slice(offset) : silences.slice(offset, offset + opts.limit), count: silences.length };
  }

  /**
   * Changes `ends_at` and/or `comment`; the window must stay non-empty. An expired (by time, `expire`
   * or DELETE) silence keeps its end, as `extend` refuses it: 409, so a lapsed silence is never
   * re-armed by an edit. Its comment may still change.
   */
  update(id: string, patch: SilenceUpdateInput): Promise<Silence> {
    return this.change(id, (s, now) => {
      if (patch.ends_at !== undefined && windowOf(s).endsMs <= now)
        throw errors.conflict(`silence ${id} has expired and its ends_at cannot change; create a new silence`);
      // A past end would backdate the silence's history (and its retention): ending it now is an expire.
      if (patch.ends_at !== undefined && Date.parse(patch.ends_at) <= now)
        throw errors.badRequest('ends_at must be in the future; to end a silence now, expire it');
      if (patch.ends_at !== undefined && Date.parse(patch.ends_at) <= Date.parse(s.starts_at)) throw errors.badRequest('ends_at must be after starts_at');
      if (patch.ends_at !== undefined) checkReach('ends_at', Date.parse(s.starts_at), Date.parse(patch.ends_at), now);
      return {
        ...s,
        ...(patch.ends_at !== undefined ? { ends_at: isoString(Date.parse(patch.ends_at)) } : {}),
        ...(patch.comment !== undefined ? { comment: patch.comment } : {}),
      };
    });
  }

  /**
   * Soft-expires: ends_at becomes now (and a silence that had not started yet gets an empty
   * window). The record stays, listable with include_expired, until the reaper's retention passes.
   * Expiring an expired silence changes nothing.
   */
  async expire(id: string): Promise<Silence> {
    if (windowOf(await this.stored(id)).endsMs <= this.deps.clock.now()) return this.get(id);
    return this.change(id, (s, now) => {
      const at = isoString(now);
      return { ...s, ends_at: at, ...(Date.parse(s.starts_at) > now ? { starts_at: at } : {}) };
    });
  }

  /**
   * Adds minutes to the current ends_at (not to now). A lapsed silence is not re-armed: 409, so
   * matchers someone let expire never come back unnoticed; create a new silence instead.
   */
  extend(id: string, minutes: number): Promise<Silence> {
    return this.change(id, (s, now) => {
      const { startsMs, endsMs } = windowOf(s);
      if (endsMs <= now) throw errors.conflict(`silence ${id} has expired and cannot be extended; create a new silence`);
      checkReach('minutes', startsMs, endsMs + minutes * 60_000, now);
      return { ...s, ends_at: isoString(endsMs + minutes * 60_000) };
    });
  }

  /** Deletes silences that ended more than `retentionMs` ago; returns how many. */
  async reap(retentionMs: number): Promise<number> {
    const cutoff = this.deps.clock.now() - retentionMs;
    let deleted = 0;
    for (const stored of this.snapshot.all) {
      if (windowOf(stored).endsMs > cutoff) continue;
      if (await this.records.remove(stored.id)) deleted++;
    }
    return deleted;
  }

  /**
   * One compare-and-swap edit (read again after a concurrent one), stamped updated_at. The clock
   * is read on every try: a try that lost to an expire must see the silence as now expired, not
   * as it stood at the first read (an extend would re-arm it).
   */
  private async change(id: string, next: (s: StoredSilence, nowMs: number) => StoredSilence): Promise<Silence> {
    let now = this.deps.clock.now();
    const updated = await this.records.update(id, (s) => {
      now = this.deps.clock.now();
      return { ...next(s, now), updated_at: isoString(now) };
    });
    if (!updated) throw errors.notFound('silence', id);
    return toSilence(updated.record, now);
  }

  private async refresh(): Promise<void> {
    const { records, bad } = await this.records.listAll();
    for (const ref of bad) this.log.error({ silence: ref.id, namespace: ref.namespace, tenant: ref.tenant }, 'stored silence is unreadable; skipped');
    this.snapshot = new SilenceIndex(
      records.map((r) => r.record),
      (s) => this.log.error({ silence: s.id, namespace: s.namespace, tenant: s.tenant }, 'stored silence has a matcher that no longer compiles; not applied'),
    );
  }
}
