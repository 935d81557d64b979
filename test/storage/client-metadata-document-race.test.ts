import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AuditLog } from '../../src/core/audit/audit-log.js';
import {
  ClientMetadataDocuments,
  DOCUMENTS_OFF,
  type ClientMetadataDocumentPolicy,
} from '../../src/core/clients/metadata-documents.js';
import type { ClientMetadataFetcher, FetchedClientMetadata, Storage } from '../../src/core/ports.js';
import { ManualClock } from '../../src/shared/clock.js';
import { createTestStore, TEST_DATABASE_URL, type TestStore } from '../helpers/backends.js';

// Decision 46: two processes meeting a new document at the same moment both fetch it and both store it.
// On PostgreSQL (READ COMMITTED) both transactions can read "no such client" before either inserts; the
// second insert then fails on the key. The loser must answer with the winner's row, not an error (a 500
// at /authorize). A barrier inside the transactions makes the interleaving certain: each waits, after
// its read, until the other has read too. SQLite's transactions take turns, so the race cannot happen
// there and the barrier would wait forever: PostgreSQL only.

const ID = 'https://app.example/client.json';
const POLICY: ClientMetadataDocumentPolicy = {
  ...DOCUMENTS_OFF,
  enabled: true,
  issuer: 'https://gatehouse.test',
  // No scopes: registering a new scope name would make the second transaction wait for the first's
  // insert of it (a row lock), so the two would never meet at the barrier.
  scopes: [],
  reservedNames: ['Gatehouse'],
};

const fetcher: ClientMetadataFetcher = {
  fetch: (): Promise<FetchedClientMetadata> =>
    Promise.resolve({
      document: { client_id: ID, client_name: 'Notes', redirect_uris: ['https://app.example/cb'] },
      maxAgeSeconds: 600,
    }),
};

/** Resolves once `count` callers have arrived. */
function barrier(count: number): () => Promise<void> {
  let arrived = 0;
  let release!: () => void;
  const all = new Promise<void>((resolve) => (release = resolve));
  return () => {
    arrived += 1;
    if (arrived === count) release();
    return all;
  };
}

/** `storage` whose transactions wait at `meet` after their first read of a client. */
function meetingAfterRead(storage: Storage, meet: () => Promise<void>): Storage {
  const inTransaction = (tx: Storage): Storage =>
    new Proxy(tx, {
      get(target, property) {
        if (property !== 'clients') return Reflect.get(target, property, target) as unknown;
        const clients = target.clients;
        return {
          ...clients,
          insert: clients.insert.bind(clients),
          update: clients.update.bind(clients),
          get: async (id: string) => {
            const found = await clients.get(id);
            await meet();
            return found;
          },
        };
      },
    });
  return new Proxy(storage, {
    get(target, property) {
      if (property === 'atomically') {
        return <T>(work: (tx: Storage) => Promise<T>) => target.atomically((tx) => work(inTransaction(tx)));
      }
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

describe(
  'a new document fetched by two processes at once (PostgreSQL, decision 46)',
  { skip: TEST_DATABASE_URL === undefined && 'GATEHOUSE_TEST_DATABASE_URL is not set' },
  () => {
    let store: TestStore;
    before(async () => {
      store = await createTestStore('postgres');
    });
    after(async () => {
      await store?.cleanup();
    });

    it('both answer with the stored client, one insert lost to the key and one client.registered', async () => {
      const clock = new ManualClock(1_800_000_000);
      const meet = barrier(2);
      const process = (storage: Storage) => {
        const racing = meetingAfterRead(storage, meet);
        return new ClientMetadataDocuments({
          storage: racing,
          clock,
          fetcher,
          policy: POLICY,
          audit: new AuditLog(racing, clock),
        });
      };
      const [first, second] = await Promise.all([
        process(store.storage).resolve(ID),
        process(store.reopen()).resolve(ID),
      ]);
      assert.equal(first?.id, ID);
      assert.equal(second?.id, ID);
      assert.equal(first?.registration, 'document');
      assert.equal(second?.registration, 'document');
      const { items } = await store.storage.clients.list({
        registration: ['document'],
        limit: 10,
        offset: 0,
      });
      assert.deepEqual(
        items.map((client) => client.id),
        [ID],
      );
      const events = await store.storage.auditEvents.list({ clientId: ID, limit: 10 });
      assert.deepEqual(
        events.map((event) => event.type),
        ['client.registered'],
        'the lost insert recorded nothing',
      );
    });
  },
);
