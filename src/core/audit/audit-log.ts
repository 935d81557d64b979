import { randomBytes } from 'node:crypto';
import type { Clock } from '../../shared/clock.js';
import { isoTime } from '../../shared/clock.js';
import type { AuditActor, AuditEvent, AuditJson } from '../model.js';
import type { AuditEventFilter, Storage } from '../ports.js';
import { ValidationError } from '../validation.js';

/**
 * Who made a change and from where (docs/decisions.md, decision 41): /v1 gives the token's user or
 * client and the request's address, the command line `cli` and no address.
 */
export interface AuditContext {
  actor: AuditActor | null;
  address: string | null;
}

/** The operator at the command line. */
export const CLI_AUDIT: AuditContext = { actor: { type: 'cli', id: null }, address: null };

/** A person acting on their own account (the security page, consent, a mailed link), from `address`. */
export function byUser(userId: string, address: string | null): AuditContext {
  return { actor: { type: 'user', id: userId }, address };
}

/**
 * A change made by nobody the caller named (a test, or code that has no request to name): recorded
 * all the same, with no actor.
 */
export const UNATTRIBUTED: AuditContext = { actor: null, address: null };

/** What a caller says of one event; the log adds its id, time, actor and address. */
export interface AuditEntry {
  type: string;
  userId?: string | null;
  clientId?: string | null;
  /**
   * The thing as it was and as it is, as a registry's view (viewClient, viewUser, …) shows it: views
   * hold no secret, which is what keeps secrets out of events (decision 41).
   */
  before?: AuditJson | object | null;
  after?: AuditJson | object | null;
  detail?: string | null;
}

/**
 * Where each event goes once its transaction committed: a JSON log line for a log pipeline (compose
 * wires it to the server's logger, the command line's to stderr). Never told of an event undone.
 */
export interface AuditSink {
  emit(event: AuditEventView): void;
}

/** An event as /v1/audit-events, `gatehouse audit list --json` and the log line show it. */
export interface AuditEventView {
  id: string;
  at: string;
  type: string;
  actor: { type: string; id: string | null } | null;
  user_id: string | null;
  client_id: string | null;
  address: string | null;
  before: AuditJson | null;
  after: AuditJson | null;
  detail: string | null;
}

export function viewAuditEvent(event: AuditEvent): AuditEventView {
  return {
    id: event.id,
    at: isoTime(event.at),
    type: event.type,
    actor: event.actor,
    user_id: event.userId,
    client_id: event.clientId,
    address: event.address,
    before: event.before,
    after: event.after,
    detail: event.detail,
  };
}

/** `<thing>.<what happened>`, each part lower-case words joined by hyphens. */
export const AUDIT_EVENT_TYPE = /^[a-z]+(?:-[a-z]+)*(?:\.[a-z]+(?:-[a-z]+)*)+$/;

/** The most events one page holds (GET /v1/audit-events `limit`). */
export const MAX_AUDIT_PAGE = 200;

const MAX_DETAIL = 200;

/**
 * Ids that sort by when they were made: milliseconds (base 36, fixed width), never the same twice in
 * a process, then 64 random bits (hex) against another process's same millisecond. Only [0-9a-z], so
 * PostgreSQL's collation orders them as SQLite and the fake do.
 */
let lastMillis = 0;
export function newAuditEventId(): string {
  // Monotonic within the process: a clock stepped back does not reorder its own events.
  lastMillis = Math.max(Date.now(), lastMillis + 1);
  return lastMillis.toString(36).padStart(10, '0') + randomBytes(8).toString('hex');
}

/** A JSON copy of a view: what the store keeps is data, not an object with methods or undefineds. */
function asJson(value: AuditJson | object | null | undefined): AuditJson | null {
  if (value === undefined || value === null) return null;
  return JSON.parse(JSON.stringify(value)) as AuditJson;
}

/** The list's cursor: opaque to callers, the (at, id) of the page's last event. */
export function auditCursor(event: Pick<AuditEvent, 'at' | 'id'>): string {
  return Buffer.from(`${event.at}.${event.id}`).toString('base64url');
}

function parseCursor(cursor: string): { at: number; id: string } {
  const text = /^[A-Za-z0-9_-]{1,100}$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString() : '';
  const match = /^(\d{1,15})\.([0-9a-z]{1,64})$/.exec(text);
  if (match === null) throw new ValidationError('cursor', 'is not a cursor this list gave');
  return { at: Number(match[1]), id: match[2]! };
}

/** What a list asks for, as callers give it (the cursor as it was handed out). */
export interface AuditQuery extends Omit<AuditEventFilter, 'after'> {
  cursor?: string;
}

/**
 * The audit log (docs/decisions.md, decision 41). A change and its event are written in one
 * transaction (`change`): both or neither. The JSON log line of each event is written after the
 * commit, so a pipeline never hears of a change that was undone.
 */
export class AuditLog {
  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly sink: AuditSink = { emit: () => undefined },
  ) {}

  /**
   * Runs `work` in one transaction; each `record` it calls appends an event in that transaction. The
   * events reach the sink once the transaction committed; if `work` or an append fails, nothing of
   * either is kept.
   */
  async change<T>(
    context: AuditContext,
    work: (storage: Storage, record: (entry: AuditEntry) => Promise<void>) => Promise<T>,
  ): Promise<T> {
    const recorded: AuditEvent[] = [];
    const result = await this.storage.atomically((storage) =>
      work(storage, async (entry) => {
        const event = this.event(context, entry);
        await storage.auditEvents.append(event);
        recorded.push(event);
      }),
    );
    for (const event of recorded) this.sink.emit(viewAuditEvent(event));
    return result;
  }

  /**
   * Records an event that goes with no change of the store's (a failed sign-in), on its own: there is
   * nothing for it to be atomic with.
   */
  async record(context: AuditContext, entry: AuditEntry): Promise<AuditEvent> {
    const event = this.event(context, entry);
    await this.storage.auditEvents.append(event);
    this.sink.emit(viewAuditEvent(event));
    return event;
  }

  /** A page of events, newest first, and the cursor of the next page (undefined on the last). */
  async list(query: AuditQuery): Promise<{ items: AuditEvent[]; nextCursor: string | undefined }> {
    const { cursor, ...filter } = query;
    if (!Number.isInteger(filter.limit) || filter.limit < 1 || filter.limit > MAX_AUDIT_PAGE) {
      throw new ValidationError('limit', `must be 1 to ${MAX_AUDIT_PAGE}`);
    }
    for (const type of filter.types ?? []) {
      if (!AUDIT_EVENT_TYPE.test(type)) throw new ValidationError('type', `"${type}" is not an event type`);
    }
    // One more than asked: whether a next page exists, without a second read.
    const items = await this.storage.auditEvents.list({
      ...filter,
      ...(cursor === undefined ? {} : { after: parseCursor(cursor) }),
      limit: filter.limit + 1,
    });
    const page = items.slice(0, filter.limit);
    const last = page.at(-1);
    return { items: page, nextCursor: items.length > filter.limit && last ? auditCursor(last) : undefined };
  }

  private event(context: AuditContext, entry: AuditEntry): AuditEvent {
    if (!AUDIT_EVENT_TYPE.test(entry.type)) throw new Error(`malformed audit event type ${entry.type}`);
    const detail = entry.detail ?? null;
    return {
      id: newAuditEventId(),
      at: this.clock.now(),
      type: entry.type,
      actor: context.actor,
      userId: entry.userId ?? null,
      clientId: entry.clientId ?? null,
      address: context.address,
      before: asJson(entry.before),
      after: asJson(entry.after),
      detail: detail === null ? null : detail.slice(0, MAX_DETAIL),
    };
  }
}
