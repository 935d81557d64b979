import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { calculateThumbprint, generateKeyPair, generateProof, type KeyPair } from 'dpop';
import { decodeJwt } from 'jose';
import { createGatehouse, type Gatehouse } from '../../src/compose/gatehouse.js';
import { ManualClock } from '../../src/shared/clock.js';
import { FormBrowser } from '../helpers/form-browser.js';
import { backends } from '../helpers/backends.js';
import { basicAuth, type HttpResponse, type TestHttpClient } from '../helpers/https-client.js';
import { InjectClient } from '../helpers/inject-client.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import {
  assertOAuthError,
  assertTokenSuccess,
  ISSUER,
  pkcePair,
  type TokenBody,
} from '../helpers/token-responses.js';

// RFC 9449 over HTTPS on both stores, with proofs made by the `dpop` package (panva), an
// implementation independent of Gatehouse's: the token endpoint for client_credentials, the code
// flow with dpop_jkt, refresh (a public client's bound, a confidential client's rebound), nonces,
// replay refused across two processes on one store, and /v1 and /userinfo with the DPoP scheme.

const TOKEN_URL = `${ISSUER}/token`;
const REDIRECT = 'https://rp.example/cb';
const ALGORITHMS = ['ES256', 'PS256', 'RS256', 'EdDSA', 'Ed25519'];

/**
 * The `dpop` package signs with the wall clock; the server runs on a manual one that starts at the
 * wall time and stands still. Brought to the wall time before each proof, so that a slow run (both
 * stores, a busy machine) never ages a proof past the 60-second window.
 */
function syncClock(clock: ManualClock): void {
  const wall = Math.floor(Date.now() / 1000);
  if (wall > clock.now()) clock.advance(wall - clock.now());
}

interface Party {
  id: string;
  secret: string;
}

for (const backend of backends()) {
  describe(`RFC 9449 DPoP at the token endpoint and Gatehouse's resources (${backend})`, () => {
    let server: TestServer;
    let key: KeyPair;
    let otherKey: KeyPair;
    let jkt: string;
    before(async () => {
      server = await startTestServer(backend);
      key = await generateKeyPair('ES256', { extractable: true });
      otherKey = await generateKeyPair('Ed25519', { extractable: true });
      jkt = await calculateThumbprint(key.publicKey);
    });
    after(async () => {
      await server?.close();
    });

    const proof = async (keyPair: KeyPair, htu = TOKEN_URL, htm = 'POST', accessToken?: string) => {
      syncClock(server.clock);
      return generateProof(keyPair, htu, htm, undefined, accessToken);
    };
    const token = (form: Record<string, string>, headers: Record<string, string | string[]>) =>
      server.http.request('/token', { form, headers });
    const withBasic = (party: Party, extra: Record<string, string | string[]> = {}) => ({
      authorization: basicAuth(party.id, party.secret),
      ...extra,
    });
    async function clientCredentialsParty(input: Record<string, unknown> = {}): Promise<Party> {
      const { client, secret } = await server.client({
        grant_types: ['client_credentials'],
        scopes: ['read', 'admin'],
        ...input,
      });
      return { id: client.id, secret };
    }

    it('the metadata lists dpop_signing_alg_values_supported (RFC 9449 §5.1)', async () => {
      const metadata = (await server.http.request('/.well-known/oauth-authorization-server')).json as Record<
        string,
        unknown
      >;
      assert.deepEqual(metadata.dpop_signing_alg_values_supported, ALGORITHMS);
      const oidc = (await server.http.request('/.well-known/openid-configuration')).json as Record<
        string,
        unknown
      >;
      assert.deepEqual(oidc.dpop_signing_alg_values_supported, ALGORITHMS);
    });

    it('client_credentials with a proof: token_type DPoP, cnf.jkt; /introspect says so (§5, §6)', async () => {
      const party = await clientCredentialsParty();
      const res = await token(
        { grant_type: 'client_credentials', scope: 'read' },
        withBasic(party, { dpop: await proof(key) }),
      );
      const body = assertTokenSuccess(res);
      assert.equal(body.token_type, 'DPoP');
      assert.deepEqual(decodeJwt(body.access_token).cnf, { jkt });
      assert.equal(res.headers['dpop-nonce'], undefined, 'nonces are off by default');
      const introspection = await server.http.request('/introspect', {
        form: { token: body.access_token },
        headers: withBasic(party),
      });
      assert.equal(introspection.status, 200);
      const answer = introspection.json as Record<string, unknown>;
      assert.equal(answer.active, true);
      assert.equal(answer.token_type, 'DPoP');
      assert.deepEqual(answer.cnf, { jkt });
    });

    it('two DPoP headers, a proof for another URL, or a replayed proof: 400 invalid_dpop_proof', async () => {
      const party = await clientCredentialsParty();
      const form = { grant_type: 'client_credentials' };
      const twice = await token(form, withBasic(party, { dpop: [await proof(key), await proof(key)] }));
      assertOAuthError(twice, 400, 'invalid_dpop_proof');
      assert.match((twice.json as { error_description: string }).error_description, /exactly one/);
      const elsewhere = await token(form, withBasic(party, { dpop: await proof(key, `${ISSUER}/par`) }));
      assertOAuthError(elsewhere, 400, 'invalid_dpop_proof');
      // Never the Host header: a proof for the host the request names is not one for the issuer.
      const byHost = await token(
        form,
        withBasic(party, { host: '127.0.0.1', dpop: await proof(key, 'https://127.0.0.1/token') }),
      );
      assertOAuthError(byHost, 400, 'invalid_dpop_proof');
      const once = await proof(key);
      assertTokenSuccess(await token(form, withBasic(party, { dpop: once })));
      const replayed = await token(form, withBasic(party, { dpop: once }));
      assertOAuthError(replayed, 400, 'invalid_dpop_proof');
      assert.match((replayed.json as { error_description: string }).error_description, /used before/);
    });

    it('a client registered with dpop_bound_access_tokens through /v1 must send a proof (§5.2)', async () => {
      const admin = await clientCredentialsParty({ scopes: ['admin'] });
      const adminToken = assertTokenSuccess(
        await token({ grant_type: 'client_credentials', scope: 'admin' }, withBasic(admin)),
      );
      const created = await server.http.request('/v1/clients', {
        method: 'POST',
        body: JSON.stringify({
          name: 'bound',
          grant_types: ['client_credentials'],
          scopes: ['read'],
          dpop_bound_access_tokens: true,
        }),
        headers: {
          authorization: `Bearer ${adminToken.access_token}`,
          'content-type': 'application/json',
        },
      });
      assert.equal(created.status, 201, created.text);
      const view = created.json as {
        client_id: string;
        client_secret: string;
        dpop_bound_access_tokens: boolean;
      };
      assert.equal(view.dpop_bound_access_tokens, true);
      const party = { id: view.client_id, secret: view.client_secret };
      assertOAuthError(
        await token({ grant_type: 'client_credentials' }, withBasic(party)),
        400,
        'invalid_dpop_proof',
      );
      const bound = assertTokenSuccess(
        await token({ grant_type: 'client_credentials' }, withBasic(party, { dpop: await proof(key) })),
      );
      assert.equal(bound.token_type, 'DPoP');
    });

    it('the code flow with dpop_jkt: the code and a public client’s refresh token bound to the key (§5, §10)', async () => {
      const { client } = await server.client({
        name: 'dpop public app',
        redirect_uris: [REDIRECT],
        scopes: ['read'],
        public: true,
        grant_types: ['authorization_code', 'refresh_token'],
      });
      const alice = await server.user();
      const pkce = pkcePair();
      const query = new URLSearchParams({
        client_id: client.id,
        response_type: 'code',
        redirect_uri: REDIRECT,
        scope: 'read',
        state: 's',
        code_challenge: pkce.challenge,
        code_challenge_method: 'S256',
        dpop_jkt: jkt,
      });
      const browser = new FormBrowser(server);
      await browser.signIn(alice.user.username, alice.password);
      const consentPage = await browser.get(`/authorize?${query.toString()}`);
      assert.equal(consentPage.status, 200, consentPage.text.slice(0, 300));
      const allowed = await browser.post('/consent', {
        csrf_token: FormBrowser.hidden(consentPage, 'csrf_token'),
        request: FormBrowser.hidden(consentPage, 'request'),
        decision: 'allow',
        lifetime: '3600',
        scope: ['read'],
      });
      assert.equal(allowed.status, 302, allowed.text.slice(0, 300));
      const code = new URL(String(allowed.headers.location)).searchParams.get('code') ?? '';
      const form = {
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT,
        client_id: client.id,
        code_verifier: pkce.verifier,
      };
      assertOAuthError(await token(form, {}), 400, 'invalid_grant');
      assertOAuthError(await token(form, { dpop: await proof(otherKey) }), 400, 'invalid_grant');
      const tokens = assertTokenSuccess(await token(form, { dpop: await proof(key) }));
      assert.equal(tokens.token_type, 'DPoP');
      assert.deepEqual(decodeJwt(tokens.access_token).cnf, { jkt });

      const refresh = {
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token ?? '',
        client_id: client.id,
      };
      const unproven = await token(refresh, {});
      assertOAuthError(unproven, 400, 'invalid_grant');
      assert.match((unproven.json as { error_description: string }).error_description, /bound to a DPoP key/);
      assertOAuthError(await token(refresh, { dpop: await proof(otherKey) }), 400, 'invalid_grant');
      const refreshed = assertTokenSuccess(await token(refresh, { dpop: await proof(key) }));
      assert.equal(refreshed.token_type, 'DPoP');
      // The rotated token is bound too.
      const next = { ...refresh, refresh_token: refreshed.refresh_token ?? '' };
      assertOAuthError(await token(next, { dpop: await proof(otherKey) }), 400, 'invalid_grant');
      assertTokenSuccess(await token(next, { dpop: await proof(key) }));
    });

    async function passwordTokens(scopes: string[], dpop: KeyPair | undefined) {
      const { client, secret } = await server.client({ grant_types: ['password', 'refresh_token'], scopes });
      const { user, password } = await server.user();
      const party = { id: client.id, secret };
      const res = await token(
        { grant_type: 'password', username: user.username, password, scope: scopes.join(' ') },
        withBasic(party, dpop === undefined ? {} : { dpop: await proof(dpop) }),
      );
      return { party, user, tokens: assertTokenSuccess(res) };
    }

    it('a confidential client’s refresh is not bound: each refresh binds its access token to its proof', async () => {
      const { party, tokens } = await passwordTokens(['read'], key);
      assert.deepEqual(decodeJwt(tokens.access_token).cnf, { jkt });
      const rebound = assertTokenSuccess(
        await token(
          { grant_type: 'refresh_token', refresh_token: tokens.refresh_token ?? '' },
          withBasic(party, { dpop: await proof(otherKey) }),
        ),
      );
      assert.deepEqual(decodeJwt(rebound.access_token).cnf, {
        jkt: await calculateThumbprint(otherKey.publicKey),
      });
    });

    describe('the DPoP scheme at /v1 and /userinfo (§7)', () => {
      let tokens: TokenBody;
      before(async () => {
        ({ tokens } = await passwordTokens(['profile', 'openid'], key));
      });
      const meUrl = `${ISSUER}/v1/users/me`;
      const call = (path: string, headers: Record<string, string>) => server.http.request(path, { headers });
      const challenge = (res: HttpResponse) => String(res.headers['www-authenticate']);

      it('/v1/users/me with its proof: 200', async () => {
        const res = await call('/v1/users/me', {
          authorization: `DPoP ${tokens.access_token}`,
          dpop: await proof(key, meUrl, 'GET', tokens.access_token),
        });
        assert.equal(res.status, 200, res.text);
      });

      it('as Bearer: 401 invalid_token, with the DPoP challenge beside it', async () => {
        const res = await call('/v1/users/me', { authorization: `Bearer ${tokens.access_token}` });
        assert.equal(res.status, 401);
        assert.equal((res.json as { error: string }).error, 'invalid_token');
        assert.match(
          challenge(res),
          /^Bearer realm="gatehouse", resource_metadata="[^"]+", error="invalid_token"/,
        );
        assert.match(
          challenge(res),
          new RegExp(`DPoP realm="gatehouse", resource_metadata="[^"]+", algs="${ALGORITHMS.join(' ')}"`),
        );
      });

      it('a replayed proof, one without ath, or by another key: 401 invalid_dpop_proof under DPoP', async () => {
        const once = await proof(key, meUrl, 'GET', tokens.access_token);
        const headers = { authorization: `DPoP ${tokens.access_token}`, dpop: once };
        assert.equal((await call('/v1/users/me', headers)).status, 200);
        const replayed = await call('/v1/users/me', headers);
        assert.equal(replayed.status, 401);
        assert.match(
          challenge(replayed),
          /^DPoP realm="gatehouse", resource_metadata="[^"]+", error="invalid_dpop_proof"/,
        );
        assert.match(challenge(replayed), /algs="ES256 /);
        for (const bad of [
          await proof(key, meUrl, 'GET'),
          await proof(otherKey, meUrl, 'GET', tokens.access_token),
        ]) {
          const res = await call('/v1/users/me', { authorization: `DPoP ${tokens.access_token}`, dpop: bad });
          assert.equal(res.status, 401);
          assert.equal((res.json as { error: string }).error, 'invalid_dpop_proof');
        }
        const wrongMethod = await call('/v1/users/me', {
          authorization: `DPoP ${tokens.access_token}`,
          dpop: await proof(key, meUrl, 'POST', tokens.access_token),
        });
        assert.equal(wrongMethod.status, 401);
      });

      it('a bearer token under the DPoP scheme: 401 invalid_token', async () => {
        const { tokens: plain } = await passwordTokens(['profile'], undefined);
        const res = await call('/v1/users/me', {
          authorization: `DPoP ${plain.access_token}`,
          dpop: await proof(key, meUrl, 'GET', plain.access_token),
        });
        assert.equal(res.status, 401);
        assert.match(challenge(res), /^DPoP .*error="invalid_token"/);
      });

      it('/userinfo with its proof answers the claims; as Bearer it is refused', async () => {
        const url = `${ISSUER}/userinfo`;
        const res = await call('/userinfo', {
          authorization: `DPoP ${tokens.access_token}`,
          dpop: await proof(key, url, 'GET', tokens.access_token),
        });
        assert.equal(res.status, 200, res.text);
        assert.equal(typeof (res.json as { sub: string }).sub, 'string');
        const asBearer = await call('/userinfo', { authorization: `Bearer ${tokens.access_token}` });
        assert.equal(asBearer.status, 401);
        assert.match(challenge(asBearer), /^Bearer realm="gatehouse", error="invalid_token".*, DPoP realm=/);
      });
    });
  });

  describe(`RFC 9449 §8, §9 nonces, required (${backend})`, () => {
    let server: TestServer;
    let key: KeyPair;
    let party: Party;
    before(async () => {
      server = await startTestServer(backend, { dpopNonce: 'required' });
      key = await generateKeyPair('ES256', { extractable: true });
      const { client, secret } = await server.client({
        grant_types: ['client_credentials', 'password'],
        scopes: ['read', 'profile'],
      });
      party = { id: client.id, secret };
    });
    after(async () => {
      await server?.close();
    });
    const proof = async (nonce?: string, htu = TOKEN_URL, htm = 'POST', accessToken?: string) => {
      syncClock(server.clock);
      return generateProof(key, htu, htm, nonce, accessToken);
    };
    const tokenRequest = async (form: Record<string, string>, nonce?: string) =>
      server.http.request('/token', {
        form,
        headers: { authorization: basicAuth(party.id, party.secret), dpop: await proof(nonce) },
      });

    it('the token endpoint: 400 use_dpop_nonce with DPoP-Nonce, then success with a fresh one', async () => {
      const first = await tokenRequest({ grant_type: 'client_credentials' });
      assertOAuthError(first, 400, 'use_dpop_nonce');
      const nonce = String(first.headers['dpop-nonce']);
      assert.match(nonce, /^[A-Za-z0-9_-]{22}$/);
      const second = await tokenRequest({ grant_type: 'client_credentials' }, nonce);
      assert.equal(assertTokenSuccess(second).token_type, 'DPoP');
      assert.equal(second.headers['dpop-nonce'], nonce, 'the same slot: the same nonce');
    });

    it('a resource: 401 with WWW-Authenticate: DPoP error="use_dpop_nonce" and DPoP-Nonce, then 200', async () => {
      const { user, password } = await server.user();
      const first = await tokenRequest({
        grant_type: 'password',
        username: user.username,
        password,
        scope: 'profile',
      });
      const nonce = String(first.headers['dpop-nonce']);
      const tokens = assertTokenSuccess(
        await tokenRequest(
          { grant_type: 'password', username: user.username, password, scope: 'profile' },
          nonce,
        ),
      );
      const meUrl = `${ISSUER}/v1/users/me`;
      const without = await server.http.request('/v1/users/me', {
        headers: {
          authorization: `DPoP ${tokens.access_token}`,
          dpop: await proof(undefined, meUrl, 'GET', tokens.access_token),
        },
      });
      assert.equal(without.status, 401);
      assert.match(
        String(without.headers['www-authenticate']),
        /^DPoP realm="gatehouse", resource_metadata="[^"]+", error="use_dpop_nonce"/,
      );
      const resourceNonce = String(without.headers['dpop-nonce']);
      assert.match(resourceNonce, /^[A-Za-z0-9_-]{22}$/);
      const ok = await server.http.request('/v1/users/me', {
        headers: {
          authorization: `DPoP ${tokens.access_token}`,
          dpop: await proof(resourceNonce, meUrl, 'GET', tokens.access_token),
        },
      });
      assert.equal(ok.status, 200, ok.text);
      assert.equal(ok.headers['dpop-nonce'], resourceNonce);
    });
  });

  describe(`RFC 9449 §11.1: a proof is accepted once across two processes on one store (${backend})`, () => {
    let a: TestServer;
    let b: Gatehouse;
    let bHttp: TestHttpClient;
    let party: Party;
    const bClock = new ManualClock();
    before(async () => {
      a = await startTestServer(backend, { dpopNonce: 'required' });
      b = await createGatehouse(a.gatehouse.config, { clock: bClock, storage: a.store.reopen() });
      // The second process's requests go in process too: what is shared is the store, not a socket.
      await b.app.ready();
      bHttp = new InjectClient(b.app, b.config.basePath);
      const { client, secret } = await a.client({ grant_types: ['client_credentials'], scopes: ['read'] });
      party = { id: client.id, secret };
    });
    after(async () => {
      bHttp?.close();
      await b?.app.close();
      await a?.close();
    });

    it('A’s nonce is B’s; a proof A accepted is refused by B', async () => {
      const key = await generateKeyPair('ES256', { extractable: true });
      const send = (http: TestHttpClient, dpop: string) =>
        http.request('/token', {
          form: { grant_type: 'client_credentials' },
          headers: { authorization: basicAuth(party.id, party.secret), dpop },
        });
      syncClock(a.clock);
      syncClock(bClock);
      const asked = await send(a.http, await generateProof(key, TOKEN_URL, 'POST'));
      assertOAuthError(asked, 400, 'use_dpop_nonce');
      const nonce = String(asked.headers['dpop-nonce']);
      syncClock(a.clock);
      const once = await generateProof(key, TOKEN_URL, 'POST', nonce);
      assert.equal(assertTokenSuccess(await send(a.http, once)).token_type, 'DPoP');
      const replayed = await send(bHttp, once);
      assertOAuthError(replayed, 400, 'invalid_dpop_proof');
      assert.match((replayed.json as { error_description: string }).error_description, /used before/);
      // B takes A's nonce in a proof of its own.
      const fresh = await generateProof(key, TOKEN_URL, 'POST', nonce);
      assert.equal(assertTokenSuccess(await send(bHttp, fresh)).token_type, 'DPoP');
    });
  });
}
