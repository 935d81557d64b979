import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  exportJWK,
  generateKeyPair,
  SignJWT,
  UnsecuredJWT,
  type CryptoKey,
  type JWK,
  type JWTPayload,
} from 'jose';
import {
  ASSERTION_REJECTED,
  CLIENT_ASSERTION_TYPE,
  clientAssertionNamespace,
} from '../../src/core/clients/client-assertion.js';
import type { ClientAuthMethod, ClientCredentialsInput } from '../../src/core/clients/client-auth.js';
import type { Client, PublicJwkSet } from '../../src/core/model.js';
import type { JwksFetcher } from '../../src/core/ports.js';
import {
  addClient,
  basic,
  expectOAuthError,
  wireAnswer,
  type ExpectedError,
} from '../helpers/fakes/fixtures.js';
import { ISSUER, START, testEngine, type TestEngine } from '../helpers/fakes/test-engine.js';

/**
 * RFC 7523 private_key_jwt client authentication (§2.2, §3), through the engine's one entry point
 * (Engine.authenticateClient): every row builds an assertion, sends it, and checks the answer and what
 * the replay store kept.
 */

const TOKEN_ENDPOINT = `${ISSUER}/token`;
const INTROSPECT = `${ISSUER}/introspect`;
const JWKS_URI = 'https://keys.client.example/jwks.json';

type Alg = 'ES256' | 'RS256' | 'PS256' | 'EdDSA';
interface Signer {
  alg: Alg;
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

async function signer(alg: Alg, kid: string): Promise<Signer> {
  const { privateKey, publicKey } = await generateKeyPair(alg, alg === 'EdDSA' ? { crv: 'Ed25519' } : {});
  return { alg, kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid } };
}

/** One set of keys for the whole file: RSA key generation is the slow part. */
const keys = (async () => ({
  es: await signer('ES256', 'es-1'),
  rs: await signer('RS256', 'rs-1'),
  ps: await signer('PS256', 'ps-1'),
  ed: await signer('EdDSA', 'ed-1'),
  /** Not registered anywhere: an attacker's key, or the client's next one. */
  other: await signer('ES256', 'es-1'),
  remote: await signer('ES256', 'remote-1'),
  rotated: await signer('ES256', 'remote-2'),
}))();
type Keys = Awaited<typeof keys>;

const setOf = (...signers: Signer[]): PublicJwkSet => ({
  keys: signers.map((s) => s.publicJwk as Record<string, unknown>),
});

/** A fake of the jwks_uri fetcher port: serves what the test puts at each URI, and counts fetches. */
class FakeFetcher implements JwksFetcher {
  readonly documents = new Map<string, unknown>();
  readonly fetches: string[] = [];
  /** While set, fetches wait for it: the answer is on its way. */
  gate: Promise<void> | undefined;
  async fetch(uri: string): Promise<unknown> {
    this.fetches.push(uri);
    await this.gate;
    const document = this.documents.get(uri);
    if (document === undefined || document instanceof Error) throw document ?? new Error('404');
    return structuredClone(document);
  }
}

interface World {
  engine: TestEngine;
  keys: Keys;
  fetcher: FakeFetcher;
  /** Registered with an inline jwks of four keys (ES256, RS256, PS256, Ed25519). */
  inline: Client;
  /** Registered with a jwks_uri. */
  remote: Client;
  /** A client with a secret. */
  secretClient: Client;
  secret: string;
}

async function world(): Promise<World> {
  const k = await keys;
  const fetcher = new FakeFetcher();
  fetcher.documents.set(JWKS_URI, setOf(k.remote));
  const engine = await testEngine({ jwksFetcher: fetcher });
  const pkjwt = {
    secretHash: null,
    tokenEndpointAuthMethod: 'private_key_jwt' as const,
    grantTypes: ['client_credentials' as const],
  };
  const { client: inline } = await addClient(engine, {
    ...pkjwt,
    id: 'inline',
    jwks: setOf(k.es, k.rs, k.ps, k.ed),
  });
  const { client: remote } = await addClient(engine, { ...pkjwt, id: 'remote', jwksUri: JWKS_URI });
  const { client: secretClient, secret } = await addClient(engine, { id: 'with-secret' });
  return { engine, keys: k, fetcher, inline, remote, secretClient, secret };
}

/** Valid claims for `clientId` at the engine's clock: iss = sub = client, aud the issuer, 60 s, a jti. */
function claimsFor(clientId: string, now: number): JWTPayload {
  return { iss: clientId, sub: clientId, aud: ISSUER, iat: now, exp: now + 60, jti: randomUUID() };
}

async function sign(claims: JWTPayload, by: Signer, header: Record<string, unknown> = {}): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: by.alg, kid: by.kid, ...header }).sign(by.privateKey);
}

interface Assertion {
  /** The client whose id the claims carry. */
  client?: 'inline' | 'remote' | 'with-secret';
  /** Changes to the valid claims (undefined removes one). */
  claims?: (now: number) => Partial<Record<string, unknown>>;
  /** The key that signs; the inline client's ES256 key (or the remote one's) by default. */
  key?: keyof Keys;
  header?: Record<string, unknown>;
  /** A token made otherwise (alg none, HS256, not a JWT). */
  raw?: (claims: JWTPayload) => Promise<string>;
}

interface Row {
  name: string;
  assertion?: Assertion;
  /** The rest of the request, given the assertion built; by default just the assertion and its type. */
  input?: (assertion: string | undefined, w: World) => Partial<ClientCredentialsInput>;
  /** Sent once before, to use up its jti. */
  sendTwice?: boolean;
  expected: { client: string; method: ClientAuthMethod } | ExpectedError;
}

const REJECTED: ExpectedError = { code: 'invalid_client', status: 401, description: ASSERTION_REJECTED };
const OK_INLINE = { client: 'inline', method: 'private_key_jwt' as const };
const OK_REMOTE = { client: 'remote', method: 'private_key_jwt' as const };
const drop = undefined;

const ROWS: Row[] = [
  // What RFC 7523 §3 asks of a valid assertion, in each allowed algorithm.
  { name: 'ES256, aud the issuer', assertion: {}, expected: OK_INLINE },
  { name: 'RS256', assertion: { key: 'rs' }, expected: OK_INLINE },
  { name: 'PS256', assertion: { key: 'ps' }, expected: OK_INLINE },
  { name: 'EdDSA (Ed25519)', assertion: { key: 'ed' }, expected: OK_INLINE },
  {
    name: 'aud the token endpoint URL (§3 item 3)',
    assertion: { claims: () => ({ aud: TOKEN_ENDPOINT }) },
    expected: OK_INLINE,
  },
  {
    name: 'aud the URL of the endpoint called (RFC 9126 §2)',
    assertion: { claims: () => ({ aud: INTROSPECT }) },
    input: (a) => ({ clientAssertion: a, endpointUrl: INTROSPECT }),
    expected: OK_INLINE,
  },
  {
    name: 'aud a list that contains the issuer',
    assertion: { claims: () => ({ aud: ['https://elsewhere.example', ISSUER] }) },
    expected: OK_INLINE,
  },
  {
    name: 'no kid: the key that verifies among those that fit the alg',
    assertion: { key: 'rs', header: { kid: undefined } },
    expected: OK_INLINE,
  },
  {
    name: 'client_id in the form naming the same client',
    assertion: {},
    input: (a) => ({ clientAssertion: a, clientId: 'inline' }),
    expected: OK_INLINE,
  },
  { name: 'a key from the jwks_uri', assertion: { client: 'remote', key: 'remote' }, expected: OK_REMOTE },
  {
    name: 'exp at the five-minute bound',
    assertion: { claims: (now) => ({ exp: now + 300 }) },
    expected: OK_INLINE,
  },
  {
    name: 'exp passed, within the clock leeway',
    assertion: { claims: (now) => ({ iat: now - 60, exp: now - 20 }) },
    expected: OK_INLINE,
  },
  // The claims (RFC 7523 §3).
  { name: 'iss another client', assertion: { claims: () => ({ iss: 'remote' }) }, expected: REJECTED },
  { name: 'no iss', assertion: { claims: () => ({ iss: drop }) }, expected: REJECTED },
  {
    name: 'sub another client (iss still this one), with client_id naming this one',
    assertion: { claims: () => ({ sub: 'remote' }) },
    input: (a) => ({ clientAssertion: a, clientId: 'inline' }),
    expected: {
      code: 'invalid_client',
      status: 401,
      description: 'client_id does not match the client assertion',
    },
  },
  {
    name: 'sub another client and no client_id: the keys of the client named do not verify it',
    assertion: { claims: () => ({ sub: 'remote' }) },
    expected: REJECTED,
  },
  {
    name: 'aud another server',
    assertion: { claims: () => ({ aud: 'https://other.example' }) },
    expected: REJECTED,
  },
  {
    name: 'aud the introspection endpoint, sent to the token endpoint',
    assertion: { claims: () => ({ aud: INTROSPECT }) },
    expected: REJECTED,
  },
  { name: 'no aud', assertion: { claims: () => ({ aud: drop }) }, expected: REJECTED },
  {
    name: 'expired beyond the leeway',
    assertion: { claims: (now) => ({ iat: now - 120, exp: now - 31 }) },
    expected: REJECTED,
  },
  {
    name: 'exp more than five minutes (and the leeway) ahead',
    assertion: { claims: (now) => ({ exp: now + 331 }) },
    expected: REJECTED,
  },
  { name: 'no exp', assertion: { claims: () => ({ exp: drop }) }, expected: REJECTED },
  { name: 'nbf in the future', assertion: { claims: (now) => ({ nbf: now + 120 }) }, expected: REJECTED },
  { name: 'iat in the future', assertion: { claims: (now) => ({ iat: now + 120 }) }, expected: REJECTED },
  { name: 'no jti', assertion: { claims: () => ({ jti: drop }) }, expected: REJECTED },
  { name: 'an empty jti', assertion: { claims: () => ({ jti: '' }) }, expected: REJECTED },
  {
    name: 'a jti of 256 characters',
    assertion: { claims: () => ({ jti: 'j'.repeat(256) }) },
    expected: REJECTED,
  },
  { name: 'a replayed jti', assertion: {}, sendTwice: true, expected: REJECTED },
  // The signature.
  {
    name: 'alg none',
    assertion: { raw: async (claims) => new UnsecuredJWT(claims).encode() },
    expected: REJECTED,
  },
  {
    name: 'HS256 (a MAC, keyed with anything the attacker likes)',
    assertion: {
      raw: (claims) =>
        new SignJWT(claims)
          .setProtectedHeader({ alg: 'HS256', kid: 'es-1' })
          .sign(new Uint8Array(32).fill(1)),
    },
    expected: REJECTED,
  },
  {
    name: 'signed by a key not registered, under a registered kid',
    assertion: { key: 'other' },
    expected: REJECTED,
  },
  { name: 'a kid the registered set lacks', assertion: { header: { kid: 'nope' } }, expected: REJECTED },
  {
    name: 'a signature that does not match',
    assertion: {},
    input: (a) => ({ clientAssertion: `${a?.slice(0, -4)}AAAA` }),
    expected: REJECTED,
  },
  {
    name: 'not a JWT at all',
    input: () => ({ clientAssertion: 'not-a-jwt', clientId: 'inline' }),
    expected: REJECTED,
  },
  // The request (RFC 7521 §4.2).
  {
    name: 'client_id naming another client',
    assertion: {},
    input: (a) => ({ clientAssertion: a, clientId: 'remote' }),
    expected: {
      code: 'invalid_client',
      status: 401,
      description: 'client_id does not match the client assertion',
    },
  },
  {
    name: 'another client_assertion_type',
    assertion: {},
    input: (a) => ({
      clientAssertion: a,
      clientAssertionType: 'urn:ietf:params:oauth:client-assertion-type:saml2-bearer',
    }),
    expected: {
      code: 'invalid_client',
      status: 401,
      description: `client_assertion_type must be ${CLIENT_ASSERTION_TYPE}`,
    },
  },
  {
    name: 'client_assertion_type without client_assertion',
    input: () => ({ clientAssertion: undefined, clientId: 'inline' }),
    expected: {
      code: 'invalid_client',
      status: 401,
      description: 'client_assertion is required with client_assertion_type',
    },
  },
  {
    name: 'an assertion and a client_secret: one method only (RFC 6749 §2.3)',
    assertion: {},
    input: (a) => ({ clientAssertion: a, clientSecret: 'x' }),
    expected: { code: 'invalid_request', status: 400 },
  },
  {
    name: 'an assertion and HTTP Basic: one method only',
    assertion: {},
    input: (a, w) => ({ clientAssertion: a, authorization: basic(w.secretClient.id, w.secret) }),
    expected: { code: 'invalid_request', status: 400 },
  },
  {
    name: 'an assertion naming an unknown client',
    assertion: { claims: () => ({ iss: 'ghost', sub: 'ghost' }) },
    expected: REJECTED,
  },
  // A client authenticates only as it was registered.
  {
    name: 'an assertion for a client with a secret',
    assertion: { client: 'with-secret' },
    expected: REJECTED,
  },
  {
    name: 'a private_key_jwt client presenting a secret with Basic',
    input: () => ({ clientAssertionType: undefined, authorization: basic('inline', 'secret-of-inline') }),
    expected: { code: 'invalid_client', status: 401, description: 'unknown client or wrong credentials' },
  },
  {
    name: 'a private_key_jwt client presenting client_secret_post',
    input: () => ({ clientAssertionType: undefined, clientId: 'inline', clientSecret: 'secret-of-inline' }),
    expected: { code: 'invalid_client', status: 401, description: 'unknown client or wrong credentials' },
  },
  {
    name: 'a private_key_jwt client by its client_id alone',
    input: () => ({ clientAssertionType: undefined, clientId: 'inline' }),
    expected: { code: 'invalid_client', status: 401, description: 'unknown client or wrong credentials' },
  },
];

async function build(
  w: World,
  assertion: Assertion | undefined,
): Promise<{ token?: string; claims?: JWTPayload }> {
  if (assertion === undefined) return {};
  const clientId = assertion.client ?? 'inline';
  const claims: Record<string, unknown> = { ...claimsFor(clientId, w.engine.clock.now()) };
  for (const [name, value] of Object.entries(assertion.claims?.(w.engine.clock.now()) ?? {})) {
    if (value === undefined) delete claims[name];
    else claims[name] = value;
  }
  if (assertion.raw !== undefined) return { token: await assertion.raw(claims), claims };
  const key = w.keys[assertion.key ?? (clientId === 'remote' ? 'remote' : 'es')];
  const header = { ...assertion.header };
  let token = await sign(claims, key, header);
  if ('kid' in header && header.kid === undefined) {
    token = await new SignJWT(claims).setProtectedHeader({ alg: key.alg }).sign(key.privateKey);
  }
  return { token, claims };
}

describe('private_key_jwt client authentication (RFC 7523 §2.2, §3)', () => {
  for (const row of ROWS) {
    it(row.name, async () => {
      const w = await world();
      const { token, claims } = await build(w, row.assertion);
      const input: ClientCredentialsInput = {
        authorization: undefined,
        clientId: undefined,
        clientSecret: undefined,
        clientAssertionType: CLIENT_ASSERTION_TYPE,
        clientAssertion: token,
        ...row.input?.(token, w),
      };
      if (row.sendTwice === true) await w.engine.engine.authenticateClient(input);
      const expected = row.expected;
      const jti = typeof claims?.jti === 'string' ? claims.jti : undefined;
      const namespace = clientAssertionNamespace(typeof claims?.sub === 'string' ? claims.sub : 'inline');
      if ('client' in expected) {
        const { client, method } = await w.engine.engine.authenticateClient(input);
        assert.equal(client.id, expected.client);
        assert.equal(method, expected.method);
        // The jti is spent: the same id again is a replay, in any process sharing the store.
        assert.ok(jti !== undefined);
        assert.equal(
          await w.engine.storage.usedJtis.use(namespace, jti, START + 600, w.engine.clock.now()),
          false,
        );
        return;
      }
      const error = await expectOAuthError(w.engine.engine.authenticateClient(input), expected);
      const answer = wireAnswer(error);
      assert.equal(answer.status, expected.status);
      assert.deepEqual(answer.body, { error: expected.code, error_description: error.description });
      // A refused assertion leaves its jti unspent (a replayed one was spent by its first use).
      if (jti !== undefined && row.sendTwice !== true && jti.length <= 255 && jti !== '') {
        assert.equal(
          await w.engine.storage.usedJtis.use(namespace, jti, START + 600, w.engine.clock.now()),
          true,
          'the refused assertion spent its jti',
        );
      }
    });
  }
});

/** One step of a jwks_uri scenario: move the clock, change the published set, send an assertion. */
interface RemoteStep {
  advance?: number;
  /** What the jwks_uri serves from now on (an Error: the fetch fails). */
  publish?: (k: Keys) => unknown;
  /** Which key signs the assertion sent. */
  key: keyof Keys;
  ok: boolean;
  /** How many fetches of the jwks_uri there have been after this step. */
  fetches: number;
}

const REMOTE_ROWS: Array<{ name: string; steps: RemoteStep[] }> = [
  {
    name: 'fetched once, then served from the cache for five minutes, then fetched again',
    steps: [
      { key: 'remote', ok: true, fetches: 1 },
      { advance: 299, key: 'remote', ok: true, fetches: 1 },
      { advance: 1, key: 'remote', ok: true, fetches: 2 },
    ],
  },
  {
    name: 'an unknown kid fetches the set again once: the client rotated its key',
    steps: [
      { key: 'remote', ok: true, fetches: 1 },
      { advance: 30, publish: (k) => setOf(k.remote, k.rotated), key: 'rotated', ok: true, fetches: 2 },
      { key: 'rotated', ok: true, fetches: 2 },
    ],
  },
  {
    name: 'unknown kids within the cooldown fetch nothing: made-up kids cannot make us fetch per request',
    steps: [
      { key: 'remote', ok: true, fetches: 1 },
      { advance: 29, publish: (k) => setOf(k.remote, k.rotated), key: 'rotated', ok: false, fetches: 1 },
      { key: 'rotated', ok: false, fetches: 1 },
      { advance: 1, key: 'rotated', ok: true, fetches: 2 },
    ],
  },
  {
    name: 'a failed fetch refuses, and is not retried before the cooldown',
    steps: [
      { publish: () => new Error('connection refused'), key: 'remote', ok: false, fetches: 1 },
      { advance: 10, publish: (k) => setOf(k.remote), key: 'remote', ok: false, fetches: 1 },
      { advance: 20, key: 'remote', ok: true, fetches: 2 },
    ],
  },
  {
    name: 'a published set with a private key is refused whole',
    steps: [
      {
        publish: (k) => ({ keys: [{ ...k.remote.publicJwk, d: 'AAAA' }] }),
        key: 'remote',
        ok: false,
        fetches: 1,
      },
    ],
  },
  {
    name: 'a published set with a symmetric key is refused whole',
    steps: [
      {
        publish: (k) => ({ keys: [k.remote.publicJwk, { kty: 'oct', k: 'c2VjcmV0', kid: 'mac' }] }),
        key: 'remote',
        ok: false,
        fetches: 1,
      },
    ],
  },
  {
    name: 'a document that is not a JWK Set is refused',
    steps: [{ publish: () => ['not', 'a', 'set'], key: 'remote', ok: false, fetches: 1 }],
  },
];

describe('private_key_jwt keys from a jwks_uri: cache, refetch and cooldown', () => {
  for (const row of REMOTE_ROWS) {
    it(row.name, async () => {
      const w = await world();
      for (const [index, step] of row.steps.entries()) {
        w.engine.clock.advance(step.advance ?? 0);
        if (step.publish !== undefined) w.fetcher.documents.set(JWKS_URI, step.publish(w.keys));
        const token = await sign(claimsFor('remote', w.engine.clock.now()), w.keys[step.key]);
        const attempt = w.engine.engine.authenticateClient({
          authorization: undefined,
          clientId: 'remote',
          clientSecret: undefined,
          clientAssertionType: CLIENT_ASSERTION_TYPE,
          clientAssertion: token,
        });
        if (step.ok) assert.equal((await attempt).client.id, 'remote', `step ${index + 1}`);
        else await expectOAuthError(attempt, REJECTED);
        assert.equal(w.fetcher.fetches.length, step.fetches, `fetches after step ${index + 1}`);
      }
    });
  }

  it('requests that arrive while the set is being fetched share that one fetch', async () => {
    const w = await world();
    const tokens = await Promise.all(
      Array.from({ length: 5 }, () => sign(claimsFor('remote', w.engine.clock.now()), w.keys.remote)),
    );
    let answer = () => undefined as void;
    w.fetcher.gate = new Promise<void>((resolve) => (answer = resolve));
    const pending = Promise.all(
      tokens.map((token) =>
        w.engine.engine.authenticateClient({
          authorization: undefined,
          clientId: undefined,
          clientSecret: undefined,
          clientAssertionType: CLIENT_ASSERTION_TYPE,
          clientAssertion: token,
        }),
      ),
    );
    // Every request has reached the key set (a few turns of the event loop: nothing else is waited on).
    for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setImmediate(resolve));
    assert.equal(w.fetcher.fetches.length, 1, 'one fetch in flight for all five');
    answer();
    const results = await pending;
    assert.deepEqual(
      results.map((r) => r.client.id),
      Array(5).fill('remote'),
    );
    assert.equal(w.fetcher.fetches.length, 1);
  });
});
