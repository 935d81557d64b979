import assert from 'node:assert/strict';
import { exportJWK, generateKeyPair } from 'jose';
import { describe, it } from 'node:test';
import { AuditLog } from '../../src/core/audit/audit-log.js';
import { ClientRegistry } from '../../src/core/clients/client-registry.js';
import {
  ClientMetadataDocumentError,
  ClientMetadataDocuments,
  clientFromDocument,
  DOCUMENT_FETCHES_PER_HOST_PER_MINUTE,
  documentLifetime,
  hostAllowed,
  isDocumentClientId,
  MAX_DOCUMENT_CLIENT_ID_LENGTH,
  parseHostRule,
  type ClientMetadataDocumentPolicy,
} from '../../src/core/clients/metadata-documents.js';
import type { Client } from '../../src/core/model.js';
import type { ClientMetadataFetcher, FetchedClientMetadata } from '../../src/core/ports.js';
import { ConflictError } from '../../src/core/validation.js';
import { ManualClock } from '../../src/shared/clock.js';
import { memoryStorage } from '../helpers/fakes/memory-storage.js';
import { ISSUER, START } from '../helpers/fakes/test-engine.js';

/**
 * Client ID Metadata Documents in core (draft-ietf-oauth-client-id-metadata-document, decision 46):
 * which ids are documents' URLs, how long a document stands, which hosts are fetched, what a document
 * may describe, and how resolving one uses the store, the fetcher, the per-host limit and the audit log.
 */

const OPEN_SCOPES = ['openid', 'profile', 'email', 'offline_access'];
const ID = 'https://app.example/client.json';
const CALLBACK = 'https://app.example/callback';

const POLICY: ClientMetadataDocumentPolicy = {
  enabled: true,
  hosts: { allow: [], deny: [] },
  issuer: ISSUER,
  scopes: OPEN_SCOPES,
  reservedNames: ['Gatehouse'],
  allowPrivateJwksUri: false,
};

describe('isDocumentClientId (draft §3)', () => {
  const long = (length: number) => {
    const prefix = 'https://app.example/';
    return prefix + 'a'.repeat(length - prefix.length);
  };
  const ROWS: Array<[string, string, boolean]> = [
    ['an https URL with a path', ID, true],
    ['with a port other than the default', 'https://app.example:8443/client.json', true],
    ['with a query', 'https://app.example/client?tenant=1', true],
    ['an address host', 'https://127.0.0.1:8443/client.json', true],
    ['at the length limit', long(MAX_DOCUMENT_CLIENT_ID_LENGTH), true],
    ['one character over the limit', long(MAX_DOCUMENT_CLIENT_ID_LENGTH + 1), false],
    ['http', 'http://app.example/client.json', false],
    ['no path', 'https://app.example', false],
    ['the path "/"', 'https://app.example/', false],
    ['a fragment', 'https://app.example/client.json#x', false],
    ['an empty fragment', 'https://app.example/client.json#', false],
    ['a user', 'https://user@app.example/client.json', false],
    ['a user and password', 'https://user:pw@app.example/client.json', false],
    ['a ".." segment', 'https://app.example/a/../client.json', false],
    ['a "." segment', 'https://app.example/./client.json', false],
    ['an encoded ".." segment', 'https://app.example/a/%2e%2e/client.json', false],
    ['an upper-case host', 'https://App.example/client.json', false],
    ['the default port spelled out', 'https://app.example:443/client.json', false],
    ['not a URL', 'my-client', false],
    ['empty', '', false],
  ];
  for (const [name, id, expected] of ROWS) {
    it(`${name}: ${expected ? 'a document URL' : 'not one'}`, () => {
      assert.equal(isDocumentClientId(id), expected, id);
    });
  }
});

describe('documentLifetime: the answer held between the floor and the ceiling (decision 46)', () => {
  const ROWS: Array<[string, number | undefined, number]> = [
    ['nothing said: the default', undefined, 3600],
    ['no-store (0): the floor', 0, 60],
    ['below the floor', 30, 60],
    ['at the floor', 60, 60],
    ['within the bounds', 600, 600],
    ['a fraction, rounded down', 99.7, 99],
    ['at the ceiling', 86_400, 86_400],
    ['above the ceiling', 10_000_000, 86_400],
    ['not a number: the default', Number.NaN, 3600],
  ];
  for (const [name, maxAge, expected] of ROWS) {
    it(`${name}: ${expected} s`, () => assert.equal(documentLifetime(maxAge), expected));
  }
});

describe('GATEHOUSE_CLIENT_ID_METADATA_HOSTS: parseHostRule and hostAllowed', () => {
  it('reads allowed and denied patterns, lower-cased, blanks ignored', () => {
    assert.deepEqual(parseHostRule(' App.example, *.partner.example,, !evil.partner.example '), {
      allow: ['app.example', '*.partner.example'],
      deny: ['evil.partner.example'],
    });
    assert.deepEqual(parseHostRule(''), { allow: [], deny: [] });
  });

  for (const bad of [
    'https://app.example',
    '*',
    '*.',
    '**.example',
    'app example',
    'app.example:443',
    '!',
    'a..b',
    '-app.example',
  ]) {
    it(`refuses the entry ${JSON.stringify(bad)}, naming it`, () => {
      assert.throws(
        () => parseHostRule(`ok.example, ${bad}`),
        (error: unknown) => error instanceof Error && error.message.includes(`"${bad}"`),
      );
    });
  }

  const ROWS: Array<[string, string, string, boolean]> = [
    ['no rule: every host', '', 'anything.example', true],
    ['an allowed name', 'app.example', 'app.example', true],
    ['a name not on the allow list', 'app.example', 'other.example', false],
    ['a name below an allowed one is not it', 'app.example', 'www.app.example', false],
    ['*.suffix: a name below it', '*.partner.example', 'a.partner.example', true],
    ['*.suffix: two levels below', '*.partner.example', 'b.a.partner.example', true],
    ['*.suffix: not the apex', '*.partner.example', 'partner.example', false],
    ['*.suffix: not a name that only ends alike', '*.partner.example', 'evilpartner.example', false],
    [
      'a denied name, with an allow list',
      '*.partner.example, !evil.partner.example',
      'evil.partner.example',
      false,
    ],
    ['deny wins over allow of the same name', 'app.example, !app.example', 'app.example', false],
    ['only a deny list: the others pass', '!evil.example', 'good.example', true],
    ['only a deny list: the denied one', '!evil.example', 'evil.example', false],
    ['a denied *.suffix', '!*.evil.example', 'x.evil.example', false],
    ['the host compared case-blind', 'app.example', 'APP.example', true],
    ['a trailing dot', 'app.example', 'app.example.', true],
  ];
  for (const [name, rule, host, expected] of ROWS) {
    it(`${name}: ${host} under "${rule}" ${expected ? 'allowed' : 'refused'}`, () => {
      assert.equal(hostAllowed(parseHostRule(rule), host), expected);
    });
  }
});

describe('clientFromDocument: what a document may describe (draft §4.1, decision 20)', async () => {
  const { publicKey } = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', use: 'sig', alg: 'ES256' };
  const base = { client_id: ID, client_name: 'Notes', redirect_uris: [CALLBACK] };

  type Expected = RegExp | ((client: Client) => void);
  const ROWS: Array<[string, unknown, Expected]> = [
    ['not an object', [base], /not a JSON object/],
    [
      'a client_id other than the URL',
      { ...base, client_id: 'https://app.example/other.json' },
      /"client_id" is not the URL/,
    ],
    ['no client_id', { client_name: 'Notes', redirect_uris: [CALLBACK] }, /"client_id" is not the URL/],
    ['a client_secret', { ...base, client_secret: 's3cret' }, /client secret/],
    ['a client_secret_expires_at', { ...base, client_secret_expires_at: 0 }, /client secret/],
    ...['client_secret_basic', 'client_secret_post', 'client_secret_jwt'].map(
      (method): [string, unknown, Expected] => [
        `token_endpoint_auth_method ${method}`,
        { ...base, token_endpoint_auth_method: method },
        new RegExp(`"${method}" needs a shared secret`),
      ],
    ),
    [
      'no method: a public client, stored as a document client',
      base,
      (client) => {
        assert.equal(client.id, ID);
        assert.equal(client.registration, 'document');
        assert.equal(client.isPublic, true);
        assert.equal(client.tokenEndpointAuthMethod, 'none');
        assert.equal(client.secretHash, null);
        assert.equal(client.name, 'Notes');
        assert.deepEqual(client.redirectUris, [CALLBACK]);
        assert.deepEqual(client.scopes, OPEN_SCOPES);
        assert.equal(client.documentExpiresAt, START + 600);
      },
    ],
    [
      'private_key_jwt with jwks',
      { ...base, token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [jwk] } },
      (client) => {
        assert.equal(client.tokenEndpointAuthMethod, 'private_key_jwt');
        assert.equal(client.isPublic, false);
        assert.deepEqual(client.jwks, { keys: [jwk] });
        assert.equal(client.secretHash, null);
      },
    ],
    [
      'private_key_jwt with jwks_uri',
      { ...base, token_endpoint_auth_method: 'private_key_jwt', jwks_uri: 'https://app.example/jwks.json' },
      (client) => {
        assert.equal(client.tokenEndpointAuthMethod, 'private_key_jwt');
        assert.equal(client.jwksUri, 'https://app.example/jwks.json');
      },
    ],
    [
      'private_key_jwt with a jwks_uri on a loopback address',
      { ...base, token_endpoint_auth_method: 'private_key_jwt', jwks_uri: 'https://127.0.0.1/jwks.json' },
      /jwks_uri must not name/,
    ],
    ['private_key_jwt with no keys', { ...base, token_endpoint_auth_method: 'private_key_jwt' }, /jwks/],
    ['no redirect_uris', { client_id: ID, client_name: 'Notes' }, /redirect_uris/],
    [
      "a redirect URI on the issuer's origin",
      { ...base, redirect_uris: [`${ISSUER}/callback`] },
      /redirect_uris/,
    ],
    ['a javascript: redirect URI', { ...base, redirect_uris: ['javascript:alert(1)'] }, /redirect/],
    [
      'an http redirect URI on a public host',
      { ...base, redirect_uris: ['http://app.example/cb'] },
      /redirect/,
    ],
    [
      'a loopback http redirect URI (RFC 8252 §7.3)',
      { ...base, redirect_uris: ['http://127.0.0.1:8080/cb'] },
      (client) => assert.deepEqual(client.redirectUris, ['http://127.0.0.1:8080/cb']),
    ],
    ["the server's own name", { ...base, client_name: 'Gatehouse' }, /looks like, the name of this server/],
    ['a name imitating it', { ...base, client_name: 'GATEH0USE' }, /looks like, the name of this server/],
    ['a scope outside the open list', { ...base, scope: 'profile admin' }, /scope "admin" is not open/],
    [
      'scopes within the open list',
      { ...base, scope: 'openid profile' },
      (client) => assert.deepEqual(client.scopes, ['openid', 'profile']),
    ],
  ];
  for (const [name, document, expected] of ROWS) {
    it(`${name}: ${expected instanceof RegExp ? 'refused' : 'taken'}`, () => {
      if (expected instanceof RegExp) {
        assert.throws(
          () => clientFromDocument(ID, document, POLICY, START, 600, undefined),
          (error: unknown) => {
            assert.ok(error instanceof ClientMetadataDocumentError, String(error));
            assert.match(error.message, expected);
            return true;
          },
        );
      } else {
        expected(clientFromDocument(ID, document, POLICY, START, 600, undefined));
      }
    });
  }
});

/** A fetcher serving the test's documents, counting fetches, and holding them while `gate` is set. */
class FakeFetcher implements ClientMetadataFetcher {
  readonly documents = new Map<string, unknown>();
  readonly failures = new Map<string, string>();
  readonly fetched: string[] = [];
  maxAgeSeconds: number | undefined = undefined;
  gate: Promise<void> | undefined;

  async fetch(url: string): Promise<FetchedClientMetadata> {
    this.fetched.push(url);
    await this.gate;
    const failure = this.failures.get(url);
    if (failure !== undefined) throw new Error(failure);
    if (!this.documents.has(url)) throw new Error('answered 404');
    return { document: structuredClone(this.documents.get(url)), maxAgeSeconds: this.maxAgeSeconds };
  }

  count(url: string): number {
    return this.fetched.filter((entry) => entry === url).length;
  }
}

function documentsUnder(policy: Partial<ClientMetadataDocumentPolicy> = {}) {
  const storage = memoryStorage();
  const clock = new ManualClock(START);
  const fetcher = new FakeFetcher();
  const documents = new ClientMetadataDocuments({
    storage,
    clock,
    fetcher,
    policy: { ...POLICY, ...policy },
    audit: new AuditLog(storage, clock),
  });
  const doc = (id: string, extra: Record<string, unknown> = {}) =>
    fetcher.documents.set(id, { client_id: id, client_name: 'Notes', redirect_uris: [CALLBACK], ...extra });
  const events = async (id: string) =>
    (await storage.auditEvents.list({ clientId: id, limit: 50 })).reverse();
  return { storage, clock, fetcher, documents, doc, events };
}

async function refusedWith(promise: Promise<unknown>, message: RegExp): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof ClientMetadataDocumentError, String(error));
    assert.match(error.message, message);
    return true;
  });
}

describe('ClientMetadataDocuments.resolve', () => {
  it('fetches a new document, stores it, and uses the stored copy while it is fresh', async () => {
    const { fetcher, documents, doc, storage, clock } = documentsUnder();
    doc(ID);
    fetcher.maxAgeSeconds = 600;
    const first = await documents.resolve(ID);
    assert.equal(first?.registration, 'document');
    assert.equal(first?.documentExpiresAt, START + 600);
    assert.equal((await storage.clients.get(ID))?.registration, 'document');
    clock.advance(599);
    assert.equal((await documents.resolve(ID))?.id, ID);
    assert.equal(fetcher.count(ID), 1, 'the fresh copy was used');
  });

  it('fetches a stale copy again, and takes the new document', async () => {
    const { fetcher, documents, doc, clock } = documentsUnder();
    doc(ID);
    fetcher.maxAgeSeconds = 60;
    await documents.resolve(ID);
    clock.advance(60);
    doc(ID, { client_name: 'Notes 2' });
    const again = await documents.resolve(ID);
    assert.equal(fetcher.count(ID), 2);
    assert.equal(again?.name, 'Notes 2');
    assert.equal(again?.createdAt, START, 'the first fetch stays its creation');
    assert.equal(again?.documentExpiresAt, START + 60 + 60);
  });

  it('fetches once for two resolves at the same time (single flight)', async () => {
    const { fetcher, documents, doc } = documentsUnder();
    doc(ID);
    let open!: () => void;
    fetcher.gate = new Promise((resolve) => (open = resolve));
    const both = Promise.all([documents.resolve(ID), documents.resolve(ID)]);
    open();
    const [a, b] = await both;
    assert.equal(a?.id, ID);
    assert.equal(b?.id, ID);
    assert.equal(fetcher.count(ID), 1);
  });

  it('a failed fetch: a ClientMetadataDocumentError naming the host and the reason, nothing stored', async () => {
    const { fetcher, documents, storage } = documentsUnder();
    fetcher.failures.set(ID, 'the connection was refused');
    await refusedWith(
      documents.resolve(ID),
      /^the document at app\.example could not be fetched: the connection was refused$/,
    );
    await refusedWith(
      documents.resolve('https://app.example:8443/none.json'),
      /at app\.example:8443 .*answered 404/,
    );
    assert.equal(await storage.clients.get(ID), undefined);
  });

  it('a document it cannot use: refused, saying why', async () => {
    const { fetcher, documents } = documentsUnder();
    fetcher.documents.set(ID, { client_id: 'https://elsewhere.example/c.json', redirect_uris: [CALLBACK] });
    await refusedWith(documents.resolve(ID), /"client_id" is not the URL/);
  });

  it(`fetches at most ${DOCUMENT_FETCHES_PER_HOST_PER_MINUTE} documents a minute from one host`, async () => {
    const { fetcher, documents, doc, clock } = documentsUnder();
    const ids = Array.from(
      { length: DOCUMENT_FETCHES_PER_HOST_PER_MINUTE + 1 },
      (_, n) => `https://app.example/c${n}.json`,
    );
    for (const id of ids) doc(id);
    doc('https://other.example/c.json');
    for (const id of ids.slice(0, -1)) assert.equal((await documents.resolve(id))?.id, id);
    const last = ids.at(-1) ?? '';
    await refusedWith(documents.resolve(last), /too many documents fetched from app\.example this minute/);
    assert.equal(fetcher.count(last), 0, 'refused before fetching');
    // Another host has its own allowance; the next minute, this one has too.
    assert.ok(await documents.resolve('https://other.example/c.json'));
    clock.advance(60 - (START % 60));
    assert.equal((await documents.resolve(last))?.id, last);
  });

  it('off: an https client_id is no client, and nothing is fetched', async () => {
    const { fetcher, documents, doc } = documentsUnder({ enabled: false });
    doc(ID);
    assert.equal(documents.enabled, false);
    assert.equal(await documents.resolve(ID), undefined);
    assert.equal(fetcher.fetched.length, 0);
  });

  it('an id that is not a document URL is no client, and nothing is fetched', async () => {
    const { fetcher, documents } = documentsUnder();
    assert.equal(await documents.resolve('https://App.example/client.json'), undefined);
    assert.equal(await documents.resolve('some-client'), undefined);
    assert.equal(fetcher.fetched.length, 0);
  });

  it('a denied host: refused, naming it, without a fetch', async () => {
    const { fetcher, documents, doc } = documentsUnder({ hosts: parseHostRule('!app.example') });
    doc(ID);
    await refusedWith(documents.resolve(ID), /applications from app\.example are not accepted here/);
    const {
      documents: allowOnly,
      doc: allowDoc,
      fetcher: allowFetcher,
    } = documentsUnder({
      hosts: parseHostRule('*.partner.example'),
    });
    allowDoc(ID);
    await refusedWith(allowOnly.resolve(ID), /app\.example are not accepted/);
    assert.equal(fetcher.fetched.length + allowFetcher.fetched.length, 0);
  });

  it('a stored copy of a host denied since is refused too', async () => {
    const storage = memoryStorage();
    const clock = new ManualClock(START);
    const fetcher = new FakeFetcher();
    fetcher.documents.set(ID, { client_id: ID, redirect_uris: [CALLBACK] });
    const make = (policy: ClientMetadataDocumentPolicy) =>
      new ClientMetadataDocuments({ storage, clock, fetcher, policy, audit: new AuditLog(storage, clock) });
    assert.ok(await make(POLICY).resolve(ID));
    await refusedWith(make({ ...POLICY, hosts: parseHostRule('!app.example') }).resolve(ID), /not accepted/);
  });

  it("an operator's client whose id is an https URL is returned as it is, never fetched", async () => {
    const { fetcher, documents, storage, clock } = documentsUnder();
    const { client } = await new ClientRegistry(storage, clock).createWithId(ID, {
      name: 'Operator app',
      redirect_uris: [CALLBACK],
    });
    assert.deepEqual(await documents.resolve(ID), client);
    assert.equal(fetcher.fetched.length, 0);
  });

  it('records client.registered at the first fetch, client.updated only when the document changed', async () => {
    const { fetcher, documents, doc, clock, events } = documentsUnder();
    doc(ID);
    fetcher.maxAgeSeconds = 60;
    await documents.resolve(ID);
    let recorded = await events(ID);
    assert.deepEqual(
      recorded.map((event) => [event.type, event.detail, event.actor]),
      [['client.registered', 'registration document', null]],
    );
    assert.doesNotMatch(JSON.stringify(recorded), /secret_hash|"secret"/);
    // The same document again: a fetch, no event.
    clock.advance(60);
    await documents.resolve(ID);
    assert.equal(fetcher.count(ID), 2);
    assert.equal((await events(ID)).length, 1);
    // A changed one: client.updated, before and after.
    clock.advance(60);
    doc(ID, { client_name: 'Notes Pro' });
    await documents.resolve(ID);
    recorded = await events(ID);
    assert.deepEqual(
      recorded.map((event) => event.type),
      ['client.registered', 'client.updated'],
    );
    const updated = recorded[1];
    assert.equal((updated?.before as { name?: string } | null)?.name, 'Notes');
    assert.equal((updated?.after as { name?: string } | null)?.name, 'Notes Pro');
    assert.equal(updated?.detail, 'registration document');
  });
});

describe("an operator's edits of a document's client (decision 46)", () => {
  it('are refused with a conflict that sends them to the document; deleting is allowed', async () => {
    const { documents, doc, storage, clock } = documentsUnder();
    doc(ID);
    const client = (await documents.resolve(ID)) as Client;
    const registry = new ClientRegistry(storage, clock);
    for (const edit of [
      () => registry.update(client, { name: 'Renamed' }),
      () => registry.replace(client, { name: 'Renamed', redirect_uris: [CALLBACK] }),
    ]) {
      await assert.rejects(edit(), (error: unknown) => {
        assert.ok(error instanceof ConflictError, String(error));
        assert.match(error.message, new RegExp(`described by its document at ${ID.replace(/\./g, '\\.')}`));
        assert.match(error.message, /change the document instead/);
        return true;
      });
    }
    assert.equal((await storage.clients.get(ID))?.name, 'Notes', 'unchanged');
    assert.equal(await registry.delete(ID), true);
    assert.equal(await storage.clients.get(ID), undefined);
    // Fetched again when next used.
    assert.equal((await documents.resolve(ID))?.id, ID);
  });
});
