import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { describe, it } from 'node:test';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import type { ClientInput } from '../../src/core/clients/client-registry.js';
import type { Client } from '../../src/core/model.js';
import { ConflictError, ValidationError } from '../../src/core/validation.js';
import { testEngine } from '../helpers/fakes/test-engine.js';

/**
 * How a client authenticates, as the registry takes it (core/clients/client-registry.ts; the same rules for
 * `gatehouse clients` and /v1/clients): token_endpoint_auth_method, jwks, jwks_uri (RFC 7591 §2).
 */

const keys = (async () => {
  const es = await generateKeyPair('ES256', { extractable: true });
  const rsa = await generateKeyPair('RS256', { extractable: true });
  const ed = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
  // jose makes no RSA key under 2048 bits; node:crypto still does.
  const small = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({
    format: 'jwk',
  }) as JWK;
  const p384 = await generateKeyPair('ES384', { extractable: true });
  return {
    es: { ...(await exportJWK(es.publicKey)), kid: 'es' },
    esPrivate: { ...(await exportJWK(es.privateKey)), kid: 'es' },
    rsa: { ...(await exportJWK(rsa.publicKey)), kid: 'rsa' },
    rsaPrivate: await exportJWK(rsa.privateKey),
    ed: await exportJWK(ed.publicKey),
    small,
    p384: await exportJWK(p384.publicKey),
  };
})();
type Keys = Awaited<typeof keys>;

const PKJWT = {
  name: 'signer',
  grant_types: ['client_credentials'],
  token_endpoint_auth_method: 'private_key_jwt',
};
const set = (...members: JWK[]) => ({ keys: members });

interface Row {
  name: string;
  input: (k: Keys) => ClientInput;
  expected:
    | {
        method: Client['tokenEndpointAuthMethod'];
        isPublic: boolean;
        secret: boolean;
        jwks?: boolean;
        jwksUri?: string;
      }
    | { field: string; message: RegExp };
}

const ROWS: Row[] = [
  // Defaults keep every client as it was (migration 0009 does the same for stored ones).
  {
    name: 'no method: a confidential client is client_secret_basic, with a secret',
    input: () => ({ name: 'c', grant_types: ['client_credentials'] }),
    expected: { method: 'client_secret_basic', isPublic: false, secret: true },
  },
  {
    name: 'no method: a public client is none',
    input: () => ({ name: 'p', redirect_uris: ['https://app.example/cb'], public: true }),
    expected: { method: 'none', isPublic: true, secret: false },
  },
  {
    name: 'client_secret_post: a secret too',
    input: () => ({
      name: 'c',
      grant_types: ['client_credentials'],
      token_endpoint_auth_method: 'client_secret_post',
    }),
    expected: { method: 'client_secret_post', isPublic: false, secret: true },
  },
  {
    name: 'none is public, without saying public',
    input: () => ({
      name: 'p',
      redirect_uris: ['https://app.example/cb'],
      token_endpoint_auth_method: 'none',
    }),
    expected: { method: 'none', isPublic: true, secret: false },
  },
  {
    name: 'private_key_jwt with a jwks: no secret, not public',
    input: (k) => ({ ...PKJWT, jwks: set(k.es, k.rsa, k.ed) }),
    expected: { method: 'private_key_jwt', isPublic: false, secret: false, jwks: true },
  },
  {
    name: 'private_key_jwt with a jwks_uri (kept in canonical form)',
    input: () => ({ ...PKJWT, jwks_uri: 'https://Keys.Example:443/jwks.json' }),
    expected: {
      method: 'private_key_jwt',
      isPublic: false,
      secret: false,
      jwksUri: 'https://keys.example/jwks.json',
    },
  },
  // What is refused, naming the field.
  {
    name: 'an unknown method',
    input: () => ({ name: 'c', token_endpoint_auth_method: 'client_secret_jwt' }),
    expected: { field: 'token_endpoint_auth_method', message: /must be one of/ },
  },
  {
    name: 'none with public false',
    input: () => ({
      name: 'p',
      redirect_uris: ['https://a.example/cb'],
      token_endpoint_auth_method: 'none',
      public: false,
    }),
    expected: { field: 'public', message: /is public/ },
  },
  {
    name: 'private_key_jwt with public true',
    input: (k) => ({ ...PKJWT, jwks: set(k.es), public: true }),
    expected: { field: 'public', message: /not public/ },
  },
  {
    name: 'private_key_jwt with neither jwks nor jwks_uri',
    input: () => ({ ...PKJWT }),
    expected: { field: 'jwks_uri', message: /exactly one of jwks and jwks_uri/ },
  },
  {
    name: 'private_key_jwt with both jwks and jwks_uri (RFC 7591 §2)',
    input: (k) => ({ ...PKJWT, jwks: set(k.es), jwks_uri: 'https://keys.example/jwks' }),
    expected: { field: 'jwks', message: /exactly one of jwks and jwks_uri/ },
  },
  {
    name: 'keys for a client with a secret',
    input: (k) => ({ name: 'c', grant_types: ['client_credentials'], jwks: set(k.es) }),
    expected: { field: 'jwks', message: /only a private_key_jwt client/ },
  },
  {
    name: 'a jwks_uri for a public client',
    input: () => ({
      name: 'p',
      redirect_uris: ['https://a.example/cb'],
      public: true,
      jwks_uri: 'https://k.example/j',
    }),
    expected: { field: 'jwks_uri', message: /only a private_key_jwt client/ },
  },
  {
    name: 'a jwks with an EC private key (d)',
    input: (k) => ({ ...PKJWT, jwks: set(k.esPrivate) }),
    expected: { field: 'jwks', message: /key 1: has the private member "d"/ },
  },
  {
    name: 'a jwks with an RSA private key',
    input: (k) => ({ ...PKJWT, jwks: set(k.es, k.rsaPrivate) }),
    expected: { field: 'jwks', message: /key 2: has the private member "d"/ },
  },
  {
    name: 'a symmetric key',
    input: () => ({ ...PKJWT, jwks: set({ kty: 'oct', k: 'c2VjcmV0LXNlY3JldC1zZWNyZXQ' }) }),
    expected: { field: 'jwks', message: /symmetric keys/ },
  },
  {
    name: 'an RSA key of 1024 bits',
    input: (k) => ({ ...PKJWT, jwks: set(k.small) }),
    expected: { field: 'jwks', message: /at least 2048 bits/ },
  },
  {
    name: 'an EC key on a curve no allowed algorithm uses (P-384)',
    input: (k) => ({ ...PKJWT, jwks: set(k.p384) }),
    expected: { field: 'jwks', message: /crv must be P-256/ },
  },
  {
    name: 'a key whose alg is not allowed',
    input: (k) => ({ ...PKJWT, jwks: set({ ...k.es, alg: 'HS256' }) }),
    expected: { field: 'jwks', message: /alg must be one of RS256, PS256, ES256, EdDSA/ },
  },
  {
    name: 'a key for encryption',
    input: (k) => ({ ...PKJWT, jwks: set({ ...k.es, use: 'enc' }) }),
    expected: { field: 'jwks', message: /use must be "sig"/ },
  },
  {
    name: 'a point off its curve',
    input: (k) => ({ ...PKJWT, jwks: set({ ...k.es, y: k.es.x }) }),
    expected: { field: 'jwks', message: /not a valid public key/ },
  },
  {
    name: 'two keys with one kid',
    input: (k) => ({ ...PKJWT, jwks: set(k.es, { ...k.rsa, kid: 'es' }) }),
    expected: { field: 'jwks', message: /kid "es" appears twice/ },
  },
  {
    name: 'an empty set',
    input: () => ({ ...PKJWT, jwks: set() }),
    expected: { field: 'jwks', message: /at least one key/ },
  },
  {
    name: 'not a set',
    input: (k) => ({ ...PKJWT, jwks: k.es }),
    expected: { field: 'jwks', message: /must be a JWK Set/ },
  },
  {
    name: 'a jwks_uri over http',
    input: () => ({ ...PKJWT, jwks_uri: 'http://keys.example/jwks' }),
    expected: { field: 'jwks_uri', message: /https/ },
  },
  {
    name: 'a jwks_uri with user information',
    input: () => ({ ...PKJWT, jwks_uri: 'https://user:pw@keys.example/jwks' }),
    expected: { field: 'jwks_uri', message: /user information/ },
  },
  {
    name: 'a jwks_uri with a fragment',
    input: () => ({ ...PKJWT, jwks_uri: 'https://keys.example/jwks#k' }),
    expected: { field: 'jwks_uri', message: /fragment/ },
  },
  {
    name: 'a jwks_uri that is no URL',
    input: () => ({ ...PKJWT, jwks_uri: 'keys.example/jwks' }),
    expected: { field: 'jwks_uri', message: /absolute https URL/ },
  },
];

describe('client authentication methods in the registry (RFC 7591 §2)', () => {
  for (const row of ROWS) {
    it(row.name, async () => {
      const engine = await testEngine();
      const before = (await engine.engine.clients.list({ limit: 100, offset: 0 })).total;
      const attempt = engine.engine.clients.create(row.input(await keys));
      const expected = row.expected;
      if ('field' in expected) {
        await assert.rejects(attempt, (error: unknown) => {
          assert.ok(error instanceof ValidationError, String(error));
          assert.equal(error.field, expected.field);
          assert.match(error.message, expected.message);
          return true;
        });
        // Nothing was stored.
        assert.equal((await engine.engine.clients.list({ limit: 100, offset: 0 })).total, before);
        return;
      }
      const { client, secret } = await attempt;
      const stored = await engine.storage.clients.get(client.id);
      assert.deepEqual(stored, client);
      assert.equal(client.tokenEndpointAuthMethod, expected.method);
      assert.equal(client.isPublic, expected.isPublic);
      assert.equal(secret !== undefined, expected.secret);
      assert.equal(client.secretHash !== null, expected.secret);
      assert.equal(client.jwks !== null, expected.jwks ?? false);
      assert.equal(client.jwksUri, expected.jwksUri ?? null);
    });
  }
});

describe('changing how a client authenticates', () => {
  it('to private_key_jwt drops the secret; back to client_secret_basic makes a new one, shown once', async () => {
    const k = await keys;
    const engine = await testEngine();
    const { client, secret } = await engine.engine.clients.create({
      name: 'c',
      grant_types: ['client_credentials'],
    });
    assert.ok(secret);
    const keyed = await engine.engine.clients.update(client, {
      token_endpoint_auth_method: 'private_key_jwt',
      jwks: set(k.es),
    });
    assert.equal(keyed.secret, undefined);
    assert.equal((await engine.storage.clients.get(client.id))?.secretHash, null);
    await assert.rejects(engine.engine.clients.rotateSecret(keyed.client), (error: unknown) => {
      assert.ok(error instanceof ConflictError);
      assert.equal(error.field, 'token_endpoint_auth_method');
      return true;
    });

    // A jwks_uri given replaces the jwks (exactly one of them stands).
    const moved = await engine.engine.clients.update(keyed.client, { jwks_uri: 'https://keys.example/j' });
    assert.deepEqual([moved.client.jwks, moved.client.jwksUri], [null, 'https://keys.example/j']);

    const back = await engine.engine.clients.update(moved.client, {
      token_endpoint_auth_method: 'client_secret_basic',
    });
    assert.match(back.secret ?? '', /^cs_/);
    const stored = await engine.storage.clients.get(client.id);
    assert.deepEqual([stored?.jwks, stored?.jwksUri, stored?.isPublic], [null, null, false]);
    assert.notEqual(stored?.secretHash, null);
  });

  it('public given alone sets the method it implies; a settings change keeps the method and keys', async () => {
    const k = await keys;
    const engine = await testEngine();
    const { client } = await engine.engine.clients.create({
      name: 'c',
      redirect_uris: ['https://a.example/cb'],
    });
    const made = await engine.engine.clients.update(client, { public: true });
    assert.deepEqual([made.client.tokenEndpointAuthMethod, made.client.secretHash], ['none', null]);
    const keyed = await engine.engine.clients.update(made.client, {
      token_endpoint_auth_method: 'private_key_jwt',
      jwks: set(k.es),
    });
    assert.equal(keyed.client.isPublic, false);
    const renamed = await engine.engine.clients.update(keyed.client, { name: 'renamed' });
    assert.deepEqual(
      [renamed.client.tokenEndpointAuthMethod, renamed.client.jwks, renamed.secret],
      ['private_key_jwt', set(k.es), undefined],
    );
  });
});
