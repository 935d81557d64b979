import { sql, type Kysely, type RawBuilder } from 'kysely';
import { PURGE_KINDS, type PurgeCutoffs, type PurgeKind, type PurgeStore } from '../../../core/ports.js';
import type { Database } from '../schema.js';

interface PurgePlan {
  /** The table the kind's records are kept in. */
  table: string;
  /** Primary-key columns: batches are chosen by key, then deleted by key. */
  key: readonly string[];
  /** Which rows are dead. Each plan's columns are indexed (migration 0003), so a batch never scans. */
  dead(cutoffs: PurgeCutoffs): RawBuilder<unknown>;
}

// A grant is dead once nothing issued under it can be live: past the lifetime the user chose (every
// token is bounded by it), or revoked longer ago than the longest access-token lifetime.
const deadGrant = (c: PurgeCutoffs) =>
  sql`(expires_at IS NOT NULL AND expires_at <= ${c.now}) OR (revoked_at IS NOT NULL AND revoked_at <= ${c.grantsRevokedBefore})`;

/** Each kind of record the purge deletes (core/ports.ts, PURGE_KINDS, whose order the purge keeps). */
const PLANS: Record<PurgeKind, PurgePlan> = {
  authorization_codes: {
    table: 'authorization_codes',
    key: ['hash'],
    dead: (c) => sql`expires_at <= ${c.now}`,
  },
  // RFC 9126 pushed requests, consumed or not, once past their expiry (migration 0011 indexes it).
  pushed_authorization_requests: {
    table: 'pushed_authorization_requests',
    key: ['hash'],
    dead: (c) => sql`expires_at <= ${c.now}`,
  },
  // RFC 8628 device authorizations, decided or not, once past their expiry (migration 0013 indexes
  // it); before grants, which they reference.
  device_authorizations: {
    table: 'device_authorizations',
    key: ['hash'],
    dead: (c) => sql`expires_at <= ${c.now}`,
  },
  refresh_tokens: {
    table: 'refresh_tokens',
    key: ['hash'],
    // Retired tokens stay until their own expiry: reuse detection (RFC 9700 §4.14) needs them.
    dead: (c) =>
      sql`(expires_at IS NOT NULL AND expires_at <= ${c.now}) OR grant_id IN (SELECT id FROM grants WHERE ${deadGrant(c)})`,
  },
  browser_sessions: { table: 'browser_sessions', key: ['hash'], dead: (c) => sql`expires_at <= ${c.now}` },
  grants: { table: 'grants', key: ['id'], dead: deadGrant },
  revoked_access_tokens: {
    table: 'revoked_access_tokens',
    key: ['jti'],
    dead: (c) => sql`expires_at <= ${c.revokedAccessTokensExpiredBefore}`,
  },
  throttle: { table: 'throttle', key: ['key'], dead: (c) => sql`reset_at <= ${c.now}` },
  // MAC nonces are kept for their timestamp window only (migration 0004 indexes expires_at).
  mac_nonces: { table: 'mac_nonces', key: ['jti', 'nonce'], dead: (c) => sql`expires_at <= ${c.now}` },
  // Single-use ids (client assertions' jti) are kept until the token that carried them expires
  // (migration 0009 indexes expires_at).
  used_jtis: { table: 'used_jtis', key: ['namespace', 'jti'], dead: (c) => sql`expires_at <= ${c.now}` },
  // RFC 7591 §3 initial access tokens past their expiry (migration 0010 indexes expires_at).
  initial_access_tokens: {
    table: 'initial_access_tokens',
    key: ['id'],
    dead: (c) => sql`expires_at <= ${c.now}`,
  },
  // WebAuthn challenges never answered, once past their expiry (migration 0017 indexes it; decision 33).
  webauthn_challenges: {
    table: 'webauthn_challenges',
    key: ['hash'],
    dead: (c) => sql`expires_at <= ${c.now}`,
  },
  // Mail links, used or not, once past their expiry (decision 35; migration 0019 indexes it).
  mail_links: { table: 'mail_links', key: ['hash'], dead: (c) => sql`expires_at <= ${c.now}` },
  // Clients that registered themselves anonymously and were never granted anything in their first
  // days (docs/decisions.md, decision 20); and Client ID Metadata Documents' clients not fetched for as
  // long that hold no grant (decision 46: a stored document is a copy, fetched again when next used). Last: after the grants, and with none of their own, their
  // delete cascades over nothing (migration 0010 indexes the search and the cascade).
  clients: {
    table: 'clients',
    key: ['id'],
    dead: (c) =>
      c.unusedOpenClientsRegisteredBefore === undefined || c.unusedOpenClientsRegisteredBefore === null
        ? sql`1 = 0`
        : sql`((registration = 'open' AND created_at <= ${c.unusedOpenClientsRegisteredBefore} AND first_granted_at IS NULL) OR (registration = 'document' AND updated_at <= ${c.unusedOpenClientsRegisteredBefore})) AND NOT EXISTS (SELECT 1 FROM grants WHERE grants.client_id = clients.id)`,
  },
  // Audit events older than the retention (decision 41; migration 0024 indexes `at`).
  audit_events: {
    table: 'audit_events',
    key: ['id'],
    dead: (c) =>
      c.auditEventsBefore === undefined || c.auditEventsBefore === null
        ? sql`1 = 0`
        : sql`at < ${c.auditEventsBefore}`,
  },
  // The dashboard's per-minute samples older than two hours (decision 43; the key leads with `minute`).
  metric_samples: {
    table: 'metric_samples',
    key: ['minute', 'process_id', 'series', 'label'],
    dead: (c) =>
      c.metricSamplesBefore === undefined || c.metricSamplesBefore === null
        ? sql`1 = 0`
        : sql`minute < ${c.metricSamplesBefore}`,
  },
};

function planOf(purgeKind: string): PurgePlan {
  const plan = (PLANS as Record<string, PurgePlan | undefined>)[purgeKind];
  if (plan === undefined) throw new Error(`no purge plan for ${purgeKind}`);
  return plan;
}

/**
 * SQLite: the statement runs in the purging process (the purge process, at nice 19 on the server's
 * core), and a request that arrives while it runs waits for the scheduler to switch, up to a slice
 * of a millisecond or more; statements kept near a millisecond leave requests little to wait for.
 */
const SQLITE_STATEMENT_MILLIS = 1;

/**
 * PostgreSQL: a statement waits on a socket, not on the purging process's CPU, and its floor is the
 * round trip (about 1 ms here; a 500-row batch takes 3-4 ms). At 1 ms every batch stayed at 10 rows:
 * the purge-pg bench deleted 742 rows a second, fewer than a busy server makes; at 5 ms, 8,400-9,200,
 * with the probe's p99 unchanged (11-12 ms either way). Batches still shrink when the database is
 * slow, and the duty cycle still bounds the share of the database the purge takes.
 */
const POSTGRES_STATEMENT_MILLIS = 5;

export function createPurgeRepository(
  db: Kysely<Database>,
  kind: 'sqlite' | 'postgres',
  /**
   * Run after each batch that deleted rows (the SQLite purge process's WAL checkpoint, when one is
   * due: sqlite-checkpointer.ts, checkpointsAfterPurges).
   */
  afterDeletes?: () => void,
): PurgeStore {
  return {
    kinds: PURGE_KINDS,
    // One batch is one statement here.
    batchMillis: kind === 'postgres' ? POSTGRES_STATEMENT_MILLIS : SQLITE_STATEMENT_MILLIS,
    async purgeBatch(purgeKind: string, cutoffs: PurgeCutoffs, limit: number): Promise<number> {
      const plan = planOf(purgeKind);
      const t = sql.table(plan.table);
      const columns = sql.join(plan.key.map((column) => sql.ref(column)));
      const key = sql`(${columns})`;
      const statement =
        kind === 'postgres'
          ? // SKIP LOCKED: a purger in another process takes the next rows instead of the same ones,
            // and rows a request has locked (a code being redeemed) wait for the next run. The rows
            // are deleted by their ctid (a TID scan straight to each locked tuple, which stays locked
            // until the delete commits): joined back by key, a 500-row batch cost the backend 3.5-5 ms
            // of CPU, by ctid 0.8-1.1 ms (PostgreSQL 15, 300,000 rows with random keys).
            sql`DELETE FROM ${t} WHERE ctid = ANY(ARRAY(SELECT ctid FROM ${t} WHERE ${plan.dead(cutoffs)} LIMIT ${limit} FOR UPDATE SKIP LOCKED))`
          : // SQLite has one writer at a time: each statement runs alone, so no two purgers can
            // delete the same row, and a batch is a few milliseconds of the write lock.
            sql`DELETE FROM ${t} WHERE ${key} IN (SELECT ${columns} FROM ${t} WHERE ${plan.dead(cutoffs)} LIMIT ${limit})`;
      const result = await statement.execute(db);
      const rows = Number(result.numAffectedRows ?? 0n);
      if (rows > 0) afterDeletes?.();
      return rows;
    },
    async backlog(purgeKind: string, cutoffs: PurgeCutoffs, limit: number): Promise<number> {
      const plan = planOf(purgeKind);
      // The same condition the purge deletes by, over the same index, stopped at `limit` rows.
      const { rows } = await sql<{
        n: number | string;
      }>`SELECT COUNT(*) AS n FROM (SELECT 1 FROM ${sql.table(plan.table)} WHERE ${plan.dead(cutoffs)} LIMIT ${limit}) dead`.execute(
        db,
      );
      return Number(rows[0]?.n ?? 0);
    },
  };
}
