import { currentTraceCarrier, withTraceCarrier, type Tracer } from '@sluice/telemetry';
import {
  Approval,
  errors,
  isoString,
  newId,
  type Action,
  type ActionInput,
  type ApprovalLinkQuery,
  type ApprovalListQuery,
  type ApprovalParams,
  type ApprovalStatus,
  type Clock,
  type DispatchOutcome,
} from '@sluice/core';
import { RecordRepository, type Scheduler, type StateStore, type StoredRecord } from '@sluice/state';
import type { Logger } from '@sluice/telemetry';
import type { InternalEventBus } from '../events/internal-events.js';
import type { ApprovalSigner, SignedApproval } from './approval-signing.js';
import { decodeWith } from '../policies/schema-decoder.js';

/** The job kind (a durable BullMQ queue name: never rename) that moves an unanswered approval to `expired`. */
export const APPROVAL_EXPIRE_KIND = 'approval-expire';
/** The job kind (a durable BullMQ queue name: never rename) that deletes an approval once it has been kept long enough. */
export const APPROVAL_FORGET_KIND = 'approval-forget';
/** How long an approval is kept once its links have expired (decided or not): readable, then deleted. */
const APPROVAL_KEPT_MS = 7 * 86_400_000;
/** The key kind of approval records: never rename without a migration. */
const APPROVAL_KIND = 'approval';
/** Every signature failure, whatever its cause, reads the same (no oracle for which part was wrong). */
const LINK_REFUSED = 'approval not found or expired';

export interface ApprovalRequest {
  action: Action;
  rule: string;
  message: string | undefined;
  ttlSeconds: number;
  notifyProvider: string | undefined;
}

/** Sends a notification action through a provider (no rules); true when the provider accepted it. */
export type Notifier = (provider: string, action: Action) => Promise<boolean>;
/** Executes an approved action: the execute stage only (its quota was charged and its rules ran when it was dispatched). */
type ApprovalVerb = 'approve' | 'reject';

/** What a decision answers: the approval's new status and, for an approval, the execution's outcome. */
export interface ApprovalResult {
  id: string;
  status: ApprovalStatus;
  outcome: DispatchOutcome | null;
}

/** Who decided, as the approval's `decided_by` and its audit records' caller name them. */
export interface ApprovalDecider {
  /** `link:<kid>` or `caller:<id>`. */
  id: string;
  /** How the decider authenticated: `approval_link`, or the caller's own method. */
  method: string;
}

export type ApprovedExecutor = (action: ActionInput, decider: ApprovalDecider) => Promise<DispatchOutcome>;

export interface ApprovalServiceDeps {
  state: StateStore;
  clock: Clock;
  logger: Logger;
  scheduler: Scheduler;
  events: InternalEventBus;
  signer: ApprovalSigner;
  externalUrl: string;
  notify: Notifier;
  /**
   * Writes the audit record of a rejection, or of an expiry (no decider: the gateway's), absent
   * while audit is off; an approval's is its execution's.
   */
  auditUnexecuted?: (approval: Approval, decider: ApprovalDecider | undefined, atMs: number) => Promise<void>;
  /** With tracing on: an approved action's execution is a span linked to the dispatch that asked. */
  tracer?: Tracer | undefined;
}

/** Compare-and-swap rounds of a decision against writes that leave an approval pending. */
const CLAIM_ATTEMPTS = 5;

interface ExpireJobData {
  namespace: string;
  tenant: string;
  id: string;
}

function isExpireJobData(data: unknown): data is ExpireJobData {
  const d = data as Partial<ExpireJobData> | null;
  return typeof d?.namespace === 'string' && typeof d.tenant === 'string' && typeof d.id === 'string';
}

/**
 * Human approvals. A `require_approval` rule stores the action and answers `pending_approval`
 * with signed approve and reject links; the first valid decision wins by compare-and-swap on the
 * record (a second one, from any replica, is a 410), and an approval then executes the stored
 * action once. A delayed job with a deterministic id moves an unanswered approval to `expired`.
 */
export class ApprovalService {
  private readonly records: RecordRepository<Approval>;
  private readonly log: Logger;

  constructor(private readonly deps: ApprovalServiceDeps) {
    this.log = deps.logger.child({ component: 'approvals' });
    this.records = new RecordRepository<Approval>({
      state: deps.state,
      clock: deps.clock,
      kind: APPROVAL_KIND,
      label: 'approval',
      decode: decodeWith(Approval),
    });
  }

  /** Stores the action, notifies when asked, arms the expiry job and answers `pending_approval`. */
  async request(req: ApprovalRequest): Promise<DispatchOutcome> {
    const { action } = req;
    const now = this.deps.clock.now();
    const id = newId();
    // Whole seconds: the link carries expires_at in unix seconds, and the record expires with it.
    const expiresAtSec = Math.ceil((now + req.ttlSeconds * 1000) / 1000);
    const signed: SignedApproval = { namespace: action.namespace, tenant: action.tenant, id, expiresAtSec };
    const approve_url = this.link(signed, 'approve');
    const reject_url = this.link(signed, 'reject');
    const expires_at = isoString(expiresAtSec * 1000);
    const approval: Approval = {
      id,
      namespace: action.namespace,
      tenant: action.tenant,
      action_id: action.id,
      action,
      rule: req.rule,
      message: req.message ?? null,
      status: 'pending',
      created_at: isoString(now),
      expires_at,
      decided_at: null,
      decided_by: null,
      notification_sent: false,
      outcome: null,
    };
    const trace = currentTraceCarrier();
    if (trace) approval.trace = trace;
    const created = await this.records.create(approval);
    if (created !== 'created') throw new Error(`approval id ${id} could not be claimed (${created})`);
    const data: ExpireJobData = { namespace: approval.namespace, tenant: approval.tenant, id };
    await this.deps.scheduler.enqueue(APPROVAL_EXPIRE_KIND, {
      id: `approval-expire:${approval.namespace}:${approval.tenant}:${id}`,
      data,
      delayMs: expiresAtSec * 1000 - now,
    });
    this.deps.events.emit({
      type: 'approval_required',
      namespace: approval.namespace,
      tenant: approval.tenant,
      at: approval.created_at,
      data: { approval_id: id, action_id: action.id, rule: req.rule, expires_at },
    });
    // Notified only once stored: a receiver that follows a link at once finds the approval.
    const notification_sent = req.notifyProvider ? await this.notify(req, { id, approve_url, reject_url, expires_at }) : false;
    if (notification_sent) await this.recordNotified({ namespace: approval.namespace, tenant: approval.tenant, id });
    return { outcome: 'pending_approval', action_id: action.id, approval_id: id, expires_at, approve_url, reject_url, notification_sent };
  }

  /** Sets notification_sent on a stored approval, whatever has happened to it since (it may be decided already). */
  private async recordNotified(ref: ApprovalParams): Promise<void> {
    try {
      await this.records.update(ref, (a) => ({ ...a, notification_sent: true }));
    } catch (err) {
      // The notification went out and the caller is told so; only the stored flag lags.
      this.log.warn({ approval: ref.id, err }, 'approval notified but the record could not say so');
    }
  }

  async get(ref: ApprovalParams): Promise<Approval> {
    const found = await this.records.get(ref);
    if (!found) throw errors.notFound('approval', `${ref.namespace}/${ref.tenant}/${ref.id}`);
    return this.asOfNow(found.record);
  }

  /** Oldest first, one page; `status` defaults to pending; `count` is every match. */
  async list(query: ApprovalListQuery, visible: (a: Approval) => boolean): Promise<{ approvals: Approval[]; count: number }> {
    const matching = (await this.records.listIn(query)).map((a) => this.asOfNow(a)).filter((a) => a.status === query.status && visible(a));
    return { approvals: matching.slice(query.offset, query.offset + query.limit), count: matching.length };
  }

  /**
   * A pending approval past its expiry is expired, whether or not a worker has run its expiry job
   * yet (none may be running, or their queue may be behind): as the job will record it.
   */
  private asOfNow(approval: Approval): Approval {
    return approval.status === 'pending' && this.deps.clock.now() > Date.parse(approval.expires_at) ? expiredAt(approval) : approval;
  }

  /**
   * A decision from a signed link. A bad or expired signature, an unknown kid or approval, or
   * an expired approval is 404 (nothing to learn); a decided one is 410.
   */
  async decide(ref: ApprovalParams, link: ApprovalLinkQuery, verb: ApprovalVerb, execute: ApprovedExecutor): Promise<ApprovalResult> {
    const expiresAtSec = Number(link.expires_at);
    // Only the form links are issued in: `0` + expires_at would be another link with the same signature.
    if (String(expiresAtSec) !== link.expires_at) throw errors.notFoundMessage(LINK_REFUSED);
    const kid = this.deps.signer.verify({ ...ref, expiresAtSec }, link.sig, link.kid);
    if (kid === null || this.deps.clock.now() > expiresAtSec * 1000) throw errors.notFoundMessage(LINK_REFUSED);
    const found = await this.records.get(ref);
    if (!found || found.record.status === 'expired') throw errors.notFoundMessage(LINK_REFUSED);
    // The key that matched, also for a link without a kid: which key's holder decided.
    return this.settle(found, verb, { id: `link:${kid}`, method: 'approval_link' }, execute);
  }

  /**
   * A decision by an authenticated caller (the admin UI). `mayDecide` checks the caller's grants
   * against the stored action, a refusal thrown as is; an unknown or expired approval is 404, a
   * decided one 410, as for a link.
   */
  async decideAsCaller(
    ref: ApprovalParams,
    verb: ApprovalVerb,
    caller: { id: string; method: string },
    mayDecide: (approval: Approval) => void,
    execute: ApprovedExecutor,
  ): Promise<ApprovalResult> {
    const found = await this.records.get(ref);
    if (!found || found.record.status === 'expired' || this.deps.clock.now() > Date.parse(found.record.expires_at)) {
      throw errors.notFound('approval', `${ref.namespace}/${ref.tenant}/${ref.id}`);
    }
    mayDecide(found.record);
    return this.settle(found, verb, { id: `caller:${caller.id}`, method: caller.method }, execute);
  }

  /** Approving executes the stored action after the decision is recorded, so two concurrent decisions execute it at most once. */
  private async settle(found: StoredRecord<Approval>, verb: ApprovalVerb, decider: ApprovalDecider, execute: ApprovedExecutor): Promise<ApprovalResult> {
    const ref = { namespace: found.record.namespace, tenant: found.record.tenant, id: found.record.id };
    const status: ApprovalStatus = verb === 'approve' ? 'approved' : 'rejected';
    const claimed = await this.claim(found, status, decider.id);
    this.emitResolved(claimed.record);
    if (status === 'rejected') {
      await this.deps.auditUnexecuted?.(claimed.record, decider, this.deps.clock.now());
      return { id: ref.id, status, outcome: null };
    }
    const outcome = await withTraceCarrier(this.deps.tracer ?? null, 'approval execute', claimed.record.trace, () => execute(claimed.record.action, decider), {
      link: 'active-trace',
      attributes: { 'sluice.approval_id': ref.id },
    });
    // The action ran: its caller gets the outcome even if the approval record cannot take it now
    // (a 503 would invite a retry, which the claim above already turns into a 410).
    // Only the outcome is written, read again on a conflict: the notification flag may be set meanwhile.
    const done = await this.records
      .update(ref, (a) => (a.outcome === null ? { ...a, outcome } : a))
      .catch((err: unknown) => {
        this.log.warn({ approval: ref.id, err }, 'approval executed but its outcome could not be recorded');
        return undefined;
      });
    if (done === null) this.log.warn({ approval: ref.id }, 'approval executed but its outcome could not be recorded (the approval is gone)');
    return { id: ref.id, status, outcome };
  }

  /**
   * The expiry job: pending → expired (anything else stays; a retried job changes nothing). Then,
   * whatever its status, the approval is deleted APPROVAL_KEPT_MS after its links expired (a
   * second delayed job with a deterministic id), so the records do not pile up forever.
   */
  async expire(data: unknown): Promise<void> {
    if (!isExpireJobData(data)) throw new Error('approval expiry job has malformed data');
    let expiredNow = false;
    const updated = await this.records.update(data, (a) => {
      // Read again on every compare-and-swap round: a decision may have won meanwhile.
      expiredNow = a.status === 'pending';
      return expiredNow ? expiredAt(a) : a;
    });
    if (!updated) return;
    const ref: ExpireJobData = { namespace: data.namespace, tenant: data.tenant, id: data.id };
    // Only the run that expired it reports it, before anything else can fail (arming the deletion
    // below: its retry would find the approval expired and report nothing). A failed audit write
    // (sync_audit_writes; else the recorder spools it) is logged, not retried.
    if (expiredNow) {
      this.emitResolved(updated.record);
      await this.deps.auditUnexecuted?.(updated.record, undefined, Date.parse(updated.record.expires_at)).catch((err: unknown) => {
        this.log.error({ approval: ref.id, err }, 'approval expired but its audit record could not be written');
      });
    }
    await this.deps.scheduler.enqueue(APPROVAL_FORGET_KIND, {
      id: `approval-forget:${ref.namespace}:${ref.tenant}:${ref.id}`,
      data: ref,
      delayMs: Math.max(0, Date.parse(updated.record.expires_at) + APPROVAL_KEPT_MS - this.deps.clock.now()),
    });
  }

  /** `approval_resolved` on the stream: approved, rejected or expired. */
  private emitResolved(a: Approval): void {
    this.deps.events.emit({
      type: 'approval_resolved',
      namespace: a.namespace,
      tenant: a.tenant,
      at: a.decided_at ?? isoString(this.deps.clock.now()),
      data: { approval_id: a.id, action_id: a.action_id, decision: a.status },
    });
  }

  /** The deletion job: removes the approval (a retried job finds nothing to remove). */
  async forget(data: unknown): Promise<void> {
    if (!isExpireJobData(data)) throw new Error('approval deletion job has malformed data');
    await this.records.remove({ namespace: data.namespace, tenant: data.tenant, id: data.id });
  }

  /** Records the decision by compare-and-swap from pending: the one call that wins goes on, every other gets 410. */
  private async claim(found: StoredRecord<Approval>, status: ApprovalStatus, decidedBy: string): Promise<StoredRecord<Approval>> {
    const ref = { namespace: found.record.namespace, tenant: found.record.tenant, id: found.record.id };
    let current: StoredRecord<Approval> | null = found;
    for (let attempt = 0; attempt < CLAIM_ATTEMPTS && current?.record.status === 'pending'; attempt++) {
      const claimed = await this.records.swap(current, { ...current.record, status, decided_at: isoString(this.deps.clock.now()), decided_by: decidedBy });
      if (claimed) return claimed;
      // Written meanwhile: decided (410 below), or still pending (its notification flag set): read it again.
      current = await this.records.get(ref);
    }
    throw errors.gone(`approval already decided: ${current?.record.status ?? 'unknown'}`);
  }

  private link(a: SignedApproval, verb: 'approve' | 'reject'): string {
    const { sig, kid } = this.deps.signer.sign(a);
    const path = [a.namespace, a.tenant, a.id].map(encodeURIComponent).join('/');
    return `${this.deps.externalUrl.replace(/\/+$/, '')}/v1/approvals/${path}/${verb}?sig=${sig}&expires_at=${a.expiresAtSec}&kid=${encodeURIComponent(kid)}`;
  }

  private async notify(req: ApprovalRequest, links: { id: string; approve_url: string; reject_url: string; expires_at: string }): Promise<boolean> {
    const { action } = req;
    const notification: Action = {
      id: newId(),
      namespace: action.namespace,
      tenant: action.tenant,
      provider: req.notifyProvider as string,
      action_type: 'approval_notification',
      payload: {
        subject: `Approval required: ${action.action_type}`,
        body: req.message ?? `Action ${action.action_type} (${action.id}) in ${action.namespace}/${action.tenant} needs approval.`,
        approval_id: links.id,
        approval_url: links.approve_url,
        reject_url: links.reject_url,
        action_id: action.id,
        action_type: action.action_type,
        namespace: action.namespace,
        tenant: action.tenant,
        expires_at: links.expires_at,
      },
      metadata: {},
      created_at: isoString(this.deps.clock.now()),
    };
    try {
      return await this.deps.notify(notification.provider, notification);
    } catch (err) {
      this.log.warn({ approval: links.id, provider: notification.provider, err }, 'approval notification failed');
      return false;
    }
  }
}

/** A pending approval as expired: it ended at its expiry, not when the job that records it ran. */
function expiredAt(approval: Approval): Approval {
  return { ...approval, status: 'expired', decided_at: approval.expires_at };
}
