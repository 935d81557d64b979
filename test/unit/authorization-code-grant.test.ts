import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { responseLocation } from '../../src/core/authorize/response.js';
import type { OAuthError } from '../../src/core/errors.js';
import type { Client, Grant, User } from '../../src/core/model.js';
import type { TokenEndpointRequest } from '../../src/core/token-endpoint/token-endpoint.js';
import type { TokenResponse } from '../../src/core/tokens/token-issuer.js';
import { sha256 } from '../../src/shared/crypto.js';
import {
  addClient,
  addUser,
  basic,
  expectOAuthError,
  isLive,
  liveClaims,
  pkcePair,
  REDIRECT,
  seedCode,
  withBasic,
  type ExpectedError,
  type SeedCodeOptions,
} from '../helpers/fakes/fixtures.js';
import { START, testEngine, type TestEngine } from '../helpers/fakes/test-engine.js';

interface World {
  engine: TestEngine;
  client: Client;
  secret: string;
  /** Another confidential code-flow client. */
  other: { client: Client; secret: string };
  user: User;
  code: string;
  grant: Grant;
  pkce: { verifier: string; challenge: string };
  /** The response to a redemption made in `before`, if any. */
  first?: TokenResponse;
}

interface Row {
  name: string;
  /** The registration of the client the code was issued to. */
  client?: Partial<Client>;
  /** How the code was issued. */
  code?: (pkce: World['pkce']) => SeedCodeOptions;
  before?: (w: World) => Promise<void>;
  /** Parameters over the default redemption (grant_type, code, redirect_uri). */
  params?: (w: World) => Record<string, string | undefined>;
  /** Who asks; by default the code's client with HTTP Basic. */
  auth?: (w: World) => Pick<TokenEndpointRequest, 'authorization'> & Record<string, string | undefined>;
  expected: ExpectedError | 'tokens';
  /** The state the request leaves behind. */
  then?: (w: World, response: TokenResponse | undefined) => Promise<void>;
}

const redeem = (w: World, extra: Record<string, string | undefined> = {}, secret = w.secret) =>
  w.engine.token(
    withBasic(w.client, secret, {
      grant_type: 'authorization_code',
      code: w.code,
      redirect_uri: REDIRECT,
      ...extra,
    }),
  );

async function codeConsumed(w: World): Promise<boolean> {
  const stored = await w.engine.storage.codes.get(sha256(w.code));
  assert.ok(stored);
  return stored.consumedAt !== null;
}

async function grantRevokedAt(w: World): Promise<number | null | undefined> {
  return (await w.engine.storage.grants.get(w.grant.id))?.revokedAt;
}

/** The refused request changed nothing: the code is unused, its grant stands. */
async function unchanged(w: World): Promise<void> {
  assert.equal(await codeConsumed(w), false, 'the code is still unused');
  assert.equal(await grantRevokedAt(w), null, 'the grant stands');
}

const S256 = (pkce: World['pkce']): SeedCodeOptions => ({
  codeChallenge: pkce.challenge,
  codeChallengeMethod: 'S256',
});
const PLAIN = (pkce: World['pkce']): SeedCodeOptions => ({
  codeChallenge: pkce.verifier,
  codeChallengeMethod: 'plain',
});

const ROWS: Row[] = [
  {
    name: 'redeems the code: an access token for the user under the grant, and a refresh token',
    expected: 'tokens',
    async then(w, response) {
      assert.ok(response);
      assert.equal(response.token_type, 'bearer');
      assert.equal(response.expires_in, 3600);
      assert.equal(response.scope, 'read');
      const claims = await liveClaims(w.engine, response.access_token);
      assert.equal(claims.sub, w.user.id);
      assert.equal(claims.client_id, w.client.id);
      assert.equal(claims.gid, w.grant.id);
      assert.equal(claims.scope, 'read');
      const refresh = await w.engine.storage.refreshTokens.get(sha256(response.refresh_token ?? ''));
      assert.equal(refresh?.grantId, w.grant.id);
      assert.deepEqual(refresh?.scope, ['read']);
      assert.equal((await w.engine.storage.codes.get(sha256(w.code)))?.consumedAt, START);
    },
  },
  {
    name: 'issues no refresh token to a client without the refresh_token grant',
    client: { grantTypes: ['authorization_code'] },
    expected: 'tokens',
    async then(_w, response) {
      assert.equal(response?.refresh_token, undefined);
    },
  },
  {
    name: 'code missing',
    params: () => ({ code: undefined }),
    expected: { code: 'invalid_request', status: 400, description: 'code is required' },
  },
  {
    name: 'code empty',
    params: () => ({ code: '' }),
    expected: { code: 'invalid_request', status: 400, description: 'code is required' },
  },
  {
    name: 'redirect_uri missing, though the authorization request had one',
    params: () => ({ redirect_uri: undefined }),
    expected: { code: 'invalid_request', status: 400, description: 'redirect_uri is required' },
    then: unchanged,
  },
  {
    name: 'an unknown code',
    params: () => ({ code: 'ac_nosuchcode' }),
    expected: { code: 'invalid_grant', status: 400, description: 'unknown authorization code' },
    then: unchanged,
  },
  {
    name: "another client's code: answered as an unknown code, leaving it to its owner (RFC 6749 §4.1.3)",
    auth: (w) => ({ authorization: basic(w.other.client.id, w.other.secret) }),
    expected: { code: 'invalid_grant', status: 400, description: 'unknown authorization code' },
    async then(w) {
      await unchanged(w);
      assert.ok((await redeem(w)).access_token);
    },
  },
  {
    name: 'a code at the end of its ten minutes',
    before: async (w) => w.engine.clock.advance(600),
    expected: { code: 'invalid_grant', status: 400, description: 'authorization code expired' },
    then: unchanged,
  },
  {
    name: 'a code a second before the end of its ten minutes',
    before: async (w) => w.engine.clock.advance(599),
    expected: 'tokens',
  },
  {
    name: 'a redirect_uri other than the one used at /authorize',
    params: () => ({ redirect_uri: `${REDIRECT}/` }),
    expected: {
      code: 'invalid_grant',
      status: 400,
      description: 'redirect_uri does not match the authorization request',
    },
    then: unchanged,
  },
  {
    name: 'a redirect_uri differing only in case: compared as strings',
    params: () => ({ redirect_uri: 'https://APP.example/callback' }),
    expected: {
      code: 'invalid_grant',
      status: 400,
      description: 'redirect_uri does not match the authorization request',
    },
  },
  {
    name: 'a replayed code revokes the grant and every token the first use issued (RFC 6749 §4.1.2)',
    async before(w) {
      w.first = await redeem(w);
      w.engine.clock.advance(30);
    },
    expected: {
      code: 'invalid_grant',
      status: 400,
      description: 'authorization code already used; tokens issued from it are revoked',
    },
    async then(w) {
      assert.equal(await grantRevokedAt(w), START + 30);
      const refresh = await w.engine.storage.refreshTokens.get(sha256(w.first?.refresh_token ?? ''));
      assert.equal(refresh?.retiredAt, START + 30, 'the refresh token is retired with the grant');
      assert.equal(await isLive(w.engine, w.first?.access_token ?? ''), false, 'the access token is dead');
      await expectOAuthError(
        w.engine.token(
          withBasic(w.client, w.secret, {
            grant_type: 'refresh_token',
            refresh_token: w.first?.refresh_token,
          }),
        ),
        { code: 'invalid_grant', status: 400 },
      );
    },
  },
  {
    name: 'a used code presented by another client is unknown to it, and revokes nothing',
    async before(w) {
      w.first = await redeem(w);
    },
    auth: (w) => ({ authorization: basic(w.other.client.id, w.other.secret) }),
    expected: { code: 'invalid_grant', status: 400, description: 'unknown authorization code' },
    async then(w) {
      assert.equal(await grantRevokedAt(w), null);
      assert.equal(await isLive(w.engine, w.first?.access_token ?? ''), true);
    },
  },
  {
    name: 'a code whose grant was revoked before redemption',
    before: async (w) => void (await w.engine.storage.grants.revoke(w.grant.id, START)),
    expected: { code: 'invalid_grant', status: 400, description: 'the grant was revoked' },
    then: async (w) => assert.equal(await codeConsumed(w), false),
  },
  {
    name: 'a code whose grant has expired',
    code: () => ({ grantExpiresAt: START + 60 }),
    before: async (w) => w.engine.clock.advance(60),
    expected: { code: 'invalid_grant', status: 400, description: 'the grant has expired' },
  },
  {
    name: 'the tokens never outlive the grant the user chose',
    code: () => ({ grantExpiresAt: START + 1800 }),
    expected: 'tokens',
    async then(w, response) {
      assert.equal(response?.expires_in, 1800);
      const refresh = await w.engine.storage.refreshTokens.get(sha256(response?.refresh_token ?? ''));
      assert.equal(refresh?.expiresAt, START + 1800);
    },
  },
  // PKCE (RFC 7636 §4.5, §4.6)
  {
    name: 'PKCE S256: the matching verifier',
    code: S256,
    params: (w) => ({ code_verifier: w.pkce.verifier }),
    expected: 'tokens',
  },
  {
    name: 'PKCE S256: no verifier',
    code: S256,
    expected: { code: 'invalid_grant', status: 400, description: 'code_verifier is required' },
    then: unchanged,
  },
  {
    name: 'PKCE S256: a wrong verifier',
    code: S256,
    params: () => ({ code_verifier: pkcePair().verifier }),
    expected: {
      code: 'invalid_grant',
      status: 400,
      description: 'code_verifier does not match the code challenge',
    },
    then: unchanged,
  },
  {
    name: 'PKCE S256: the challenge itself as the verifier (a downgrade to plain)',
    code: S256,
    params: (w) => ({ code_verifier: w.pkce.challenge }),
    expected: {
      code: 'invalid_grant',
      status: 400,
      description: 'code_verifier does not match the code challenge',
    },
  },
  {
    name: 'PKCE S256: a malformed verifier',
    code: S256,
    params: () => ({ code_verifier: 'short' }),
    expected: {
      code: 'invalid_grant',
      status: 400,
      description: 'code_verifier does not match the code challenge',
    },
  },
  {
    name: 'PKCE plain: the verifier equal to the challenge',
    code: PLAIN,
    params: (w) => ({ code_verifier: w.pkce.verifier }),
    expected: 'tokens',
  },
  {
    name: 'PKCE plain: a different verifier',
    code: PLAIN,
    params: () => ({ code_verifier: pkcePair().verifier }),
    expected: {
      code: 'invalid_grant',
      status: 400,
      description: 'code_verifier does not match the code challenge',
    },
  },
  {
    name: 'PKCE: a challenge stored without a method is plain (RFC 7636 §4.3), never skipped',
    code: (pkce) => ({ codeChallenge: pkce.verifier, codeChallengeMethod: null }),
    expected: { code: 'invalid_grant', status: 400, description: 'code_verifier is required' },
  },
  {
    name: 'PKCE: a challenge stored without a method verifies as plain',
    code: (pkce) => ({ codeChallenge: pkce.verifier, codeChallengeMethod: null }),
    params: (w) => ({ code_verifier: w.pkce.verifier }),
    expected: 'tokens',
  },
  {
    name: 'PKCE: a verifier for a code issued without a challenge (a downgrade, RFC 9700 §2.1.1)',
    params: (w) => ({ code_verifier: w.pkce.verifier }),
    expected: {
      code: 'invalid_grant',
      status: 400,
      description: 'code_verifier sent but no code_challenge was used',
    },
    then: unchanged,
  },
  // Public clients (RFC 6749 §2.1; RFC 9700 §2.1.1)
  {
    name: 'a public client with S256, identified by client_id alone, gets tokens',
    client: { isPublic: true },
    code: S256,
    auth: (w) => ({ authorization: undefined, client_id: w.client.id }),
    params: (w) => ({ code_verifier: w.pkce.verifier }),
    expected: 'tokens',
    then: async (_w, response) => assert.equal(typeof response?.refresh_token, 'string'),
  },
  {
    name: 'a public client with a code issued without PKCE',
    client: { isPublic: true },
    auth: (w) => ({ authorization: undefined, client_id: w.client.id }),
    expected: { code: 'invalid_grant', status: 400, description: 'public clients must use PKCE' },
    then: unchanged,
  },
  {
    name: 'a public client presenting a secret',
    client: { isPublic: true },
    code: S256,
    auth: (w) => ({ authorization: basic(w.client.id, 'guess') }),
    params: (w) => ({ code_verifier: w.pkce.verifier }),
    expected: { code: 'invalid_client', status: 401, description: 'public clients have no secret' },
    then: unchanged,
  },
  {
    name: 'no client at all: never taken for the public client the code belongs to',
    client: { isPublic: true },
    code: S256,
    auth: () => ({ authorization: undefined }),
    params: (w) => ({ code_verifier: w.pkce.verifier }),
    expected: { code: 'invalid_client', status: 401, description: 'client authentication required' },
    then: unchanged,
  },
  // The client's registration
  {
    name: 'a client not registered for the authorization_code grant',
    client: { grantTypes: ['client_credentials', 'refresh_token'] },
    expected: {
      code: 'unauthorized_client',
      status: 400,
      description: 'this client may not use the authorization_code grant',
    },
    then: unchanged,
  },
  {
    name: 'client_id in the form naming the Basic-authenticated client',
    params: (w) => ({ client_id: w.client.id }),
    expected: 'tokens',
  },
  {
    name: 'client_id in the form naming another client than the Basic one',
    params: (w) => ({ client_id: w.other.client.id }),
    expected: {
      code: 'invalid_client',
      status: 401,
      description: 'client_id does not match the authenticated client',
    },
    then: unchanged,
  },
];

async function world(row: Row): Promise<World> {
  const engine = await testEngine();
  const { client, secret } = await addClient(engine, { scopes: ['read', 'write'], ...row.client });
  const other = await addClient(engine, { scopes: ['read', 'write'] });
  const user = await addUser(engine);
  const pkce = pkcePair();
  const { code, grant } = await seedCode(engine, client, user, { scope: ['read'], ...row.code?.(pkce) });
  return { engine, client, secret, other, user, code, grant, pkce };
}

describe('authorization_code grant (RFC 6749 §4.1.3, RFC 7636)', () => {
  for (const row of ROWS) {
    it(row.name, async () => {
      const w = await world(row);
      try {
        await row.before?.(w);
        const auth = row.auth?.(w) ?? { authorization: basic(w.client.id, w.secret) };
        const { authorization, ...authParams } = auth;
        const request: TokenEndpointRequest = {
          authorization,
          params: {
            grant_type: 'authorization_code',
            code: w.code,
            redirect_uri: REDIRECT,
            ...authParams,
            ...row.params?.(w),
          },
        };
        let response: TokenResponse | undefined;
        if (row.expected === 'tokens') {
          response = await w.engine.token(request);
          await liveClaims(w.engine, response.access_token);
          assert.equal(await codeConsumed(w), true);
        } else {
          await expectOAuthError(w.engine.token(request), row.expected);
        }
        await row.then?.(w, response);
      } finally {
        await w.engine.close();
      }
    });
  }

  it('lets exactly one of 20 concurrent redemptions of one code succeed; the others count as replays', async () => {
    const w = await world({ name: 'race', expected: 'tokens' });
    const results = await Promise.allSettled(Array.from({ length: 20 }, () => redeem(w)));
    const won = results.filter((r) => r.status === 'fulfilled');
    const lost = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as OAuthError] : []));
    assert.equal(won.length, 1);
    assert.equal(lost.length, 19);
    assert.ok(lost.every((error) => error.code === 'invalid_grant' && error.status === 400));
    assert.equal(await grantRevokedAt(w), START, 'a lost race is a replay: the grant is revoked');
    await w.engine.close();
  });

  it('redeems a code the authorization service issued, bound to its redirect URI and PKCE challenge', async () => {
    const engine = await testEngine();
    const { client } = await addClient(engine, { isPublic: true, scopes: ['read'] });
    const user = await addUser(engine);
    const { verifier, challenge } = pkcePair();
    const validation = await engine.validateAuthorization(
      new URLSearchParams({
        response_type: 'code',
        client_id: client.id,
        redirect_uri: REDIRECT,
        state: 'xyz',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      }).toString(),
    );
    assert.equal(validation.outcome, 'valid');
    if (validation.outcome !== 'valid') return;
    const location = new URL(
      responseLocation(
        await engine.authorization.approve(validation.request, user.id, { scope: ['read'], lifetime: 3600 }),
      ),
    );
    assert.equal(location.origin + location.pathname, REDIRECT);
    assert.equal(location.searchParams.get('state'), 'xyz');
    const code = location.searchParams.get('code') ?? '';
    const params = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: client.id };
    await expectOAuthError(
      engine.token({ authorization: undefined, params: { ...params, code_verifier: challenge } }),
      {
        code: 'invalid_grant',
        status: 400,
      },
    );
    const body = await engine.token({
      authorization: undefined,
      params: { ...params, code_verifier: verifier },
    });
    const claims = await liveClaims(engine, body.access_token);
    assert.equal(claims.sub, user.id);
    assert.equal(body.expires_in, 3600, 'bounded by the hour the user chose');
    await engine.close();
  });
});
