import type { Kysely } from 'kysely';
import type { AuditActorType, AuditEvent, AuditJson } from '../../../core/model.js';
import type { AuditEventFilter, AuditEventStore } from '../../../core/ports.js';
import type { AuditEventsTable, Database } from '../schema.js';

const json = (value: AuditJson | null): string | null => (value === null ? null : JSON.stringify(value));
const parsed = (text: string | null): AuditJson | null =>
  text === null ? null : (JSON.parse(text) as AuditJson);

export const auditEventToRow = (event: AuditEvent): AuditEventsTable => ({
  id: event.id,
  at: event.at,
  type: event.type,
  actor_type: event.actor?.type ?? null,
  actor_id: event.actor?.id ?? null,
  user_id: event.userId,
  client_id: event.clientId,
  address: event.address,
  before: json(event.before),
  after: json(event.after),
  detail: event.detail,
});

export const auditEventFromRow = (row: AuditEventsTable): AuditEvent => ({
  id: row.id,
  at: Number(row.at),
  type: row.type,
  actor: row.actor_type === null ? null : { type: row.actor_type as AuditActorType, id: row.actor_id },
  userId: row.user_id,
  clientId: row.client_id,
  address: row.address,
  before: parsed(row.before),
  after: parsed(row.after),
  detail: row.detail,
});

/**
 * The audit log (docs/decisions.md, decision 41): appended, read newest first a page at a time by
 * keyset on (at, id) (migration 0024's indexes), and deleted by the purge after the retention.
 */
export function createAuditEventRepository(db: Kysely<Database>): AuditEventStore {
  return {
    async append(event: AuditEvent) {
      await db.insertInto('audit_events').values(auditEventToRow(event)).execute();
    },
    async list(filter: AuditEventFilter) {
      let query = db.selectFrom('audit_events').selectAll();
      if (filter.types !== undefined && filter.types.length > 0) {
        query = query.where('type', 'in', [...filter.types]);
      }
      if (filter.userId !== undefined) query = query.where('user_id', '=', filter.userId);
      if (filter.clientId !== undefined) query = query.where('client_id', '=', filter.clientId);
      if (filter.since !== undefined) query = query.where('at', '>=', filter.since);
      if (filter.until !== undefined) query = query.where('at', '<', filter.until);
      const after = filter.after;
      if (after !== undefined) {
        query = query.where((eb) =>
          eb.or([eb('at', '<', after.at), eb.and([eb('at', '=', after.at), eb('id', '<', after.id)])]),
        );
      }
      const rows = await query.orderBy('at', 'desc').orderBy('id', 'desc').limit(filter.limit).execute();
      return rows.map(auditEventFromRow);
    },
  };
}
