import { sql, type Kysely } from 'kysely';
import type { Client } from '../../../core/model.js';
import type { ClientFilter, ClientStore } from '../../../core/ports.js';
import type { Database } from '../schema.js';
import { preparedQuery, type RequestStatements } from '../prepared-query.js';
import { clientFromRow, clientToRow } from './mappers.js';
import { isLookupKey } from './lookup-key.js';

/** `statements`: read one client by id as a prepared query: every token request does. */
export function createClientRepository(
  db: Kysely<Database>,
  statements?: RequestStatements,
  /**
   * How long a client read stays in this process's memory. Client authentication runs on every token
   * request; a change made through this store is seen at once, one made by another process within
   * this many milliseconds, or twice this when the store is slow to answer (see `get`).
   */
  cacheTtlMs = 0,
  /** Milliseconds now, for the cache's times: the system's, or a test's manual clock. */
  nowMs: () => number = Date.now,
): ClientStore & { forgetAll(): void } {
  const cache = new Map<string, { client: Client; until: number }>();
  /**
   * Reads in progress, by id: when a cached client expires, the requests that arrive before the store
   * answers share one read. Each running its own, a store that paused for 100 ms (a PostgreSQL backend
   * descheduled, a checkpoint) met hundreds of identical queries queued on the pool at once.
   */
  const reading = new Map<string, Promise<Client | undefined>>();
  const forget = (id: string) => {
    cache.delete(id);
    // A read started before a write may return the old row: later requests must not join it.
    reading.delete(id);
  };

  const byId = preparedQuery(statements, ({ id }: { id: string }) =>
    db.selectFrom('clients').selectAll().where('id', '=', id),
  );
  const read = async (id: string): Promise<Client | undefined> => {
    const row = await byId.first({ id });
    return row && clientFromRow(row);
  };

  /** Reads `id` once for every request that wants it until the store answers, then caches the answer. */
  const readShared = (id: string): Promise<Client | undefined> => {
    const started = read(id);
    reading.set(id, started);
    void started.then(
      (client) => {
        // Only the read still current may fill the cache: a write since has forgotten it.
        if (reading.get(id) !== started) return;
        reading.delete(id);
        if (client === undefined) cache.delete(id);
        else remember(id, client);
      },
      () => {
        if (reading.get(id) === started) reading.delete(id);
      },
    );
    return started;
  };

  const remember = (id: string, client: Client) => {
    // Bounded: a flood of distinct ids cannot grow the map without limit.
    if (cache.size >= 10_000) cache.clear();
    cache.set(id, { client, until: nowMs() + cacheTtlMs });
  };

  return {
    /** Forgets every cached client (a transaction wrote clients through other repositories). */
    forgetAll() {
      cache.clear();
      reading.clear();
    },
    async insert(client: Client) {
      forget(client.id);
      await db.insertInto('clients').values(clientToRow(client)).execute();
    },
    async get(id: string) {
      if (!isLookupKey(id)) return undefined;
      if (cacheTtlMs <= 0) return read(id);
      const cached = cache.get(id);
      const now = nowMs();
      if (cached !== undefined && cached.until > now) return { ...cached.client };
      const pending = reading.get(id) ?? readShared(id);
      // For one more cache time after it expires, an entry is served while it is read again: the
      // requests that arrive meanwhile do not wait on the store. Awaiting each refresh, every pause of
      // PostgreSQL (a checkpoint, a descheduled backend) held all token requests once a second.
      if (cached !== undefined && cached.until + cacheTtlMs > now) return { ...cached.client };
      const client = await pending;
      return client && { ...client };
    },
    async list(filter: ClientFilter) {
      let query = db.selectFrom('clients');
      if (filter.name !== undefined) query = query.where('name', '=', filter.name);
      if (filter.grantType !== undefined) {
        // grant_types is a JSON array of known names; a quoted match cannot hit a longer name.
        query = query.where('grant_types', 'like', `%"${filter.grantType}"%`);
      }
      if (filter.registration !== undefined) {
        const ways: readonly string[] =
          typeof filter.registration === 'string' ? [filter.registration] : filter.registration;
        // No way at all matches no client (an empty IN list is not SQL).
        query =
          ways.length === 0 ? query.where(sql<boolean>`1 = 0`) : query.where('registration', 'in', ways);
      }
      if (filter.identityProvider !== undefined) {
        // A JSON array of provider ids ([a-z0-9-], no quote nor LIKE wildcard but "-"): a quoted match
        // is that id and no longer one.
        query = query.where('identity_providers', 'like', `%"${filter.identityProvider}"%`);
      }
      const total = await query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      const rows = await query
        .selectAll()
        .orderBy('created_at')
        .orderBy('id')
        .limit(filter.limit)
        .offset(filter.offset)
        .execute();
      return { items: rows.map(clientFromRow), total: Number(total.n) };
    },
    async update(client: Client, secret: 'keep' | 'replace') {
      forget(client.id);
      const { id, secret_hash, ...rest } = clientToRow(client);
      const result = await db
        .updateTable('clients')
        .set(secret === 'replace' ? { ...rest, secret_hash } : rest)
        .where('id', '=', id)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },
    async delete(id: string) {
      if (!isLookupKey(id)) return false;
      forget(id);
      const result = await db.deleteFrom('clients').where('id', '=', id).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
    async recordFirstGrant(id: string, at: number) {
      forget(id);
      await db
        .updateTable('clients')
        .set({ first_granted_at: at })
        .where('id', '=', id)
        .where('first_granted_at', 'is', null)
        .execute();
    },
  };
}
