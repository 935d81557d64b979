import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import * as oidc from 'openid-client';
import type { Client, User } from '../../src/core/model.js';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { trustingFetch } from '../helpers/trusting-fetch.js';
import { ISSUER } from '../helpers/token-responses.js';
import { freePort } from '../helpers/spawned-server.js';
import {
  browserSkip,
  CLIENT_ORIGIN,
  CLIENT_REDIRECT,
  clientContext,
  type ClientSite,
  expectConsentPage,
  landedAtClient,
  launchChromium,
  signIn,
  type TestBrowser,
} from '../helpers/browser-pages.js';

// openid-client (panva), a certified OpenID Connect relying party, against a real HTTPS Gatehouse:
// discovery, the code flow with PKCE, nonce and state through Chromium's sign-in and consent,
// ID tokens validated by the library itself (signatures too: enableNonRepudiationChecks), UserInfo,
// refresh (Core §12.2) and RP-initiated logout.

const SIGNED_OUT = `${CLIENT_ORIGIN}/signed-out`;
const SCOPE = 'openid profile email';
const SINGLE_FACTOR = 'urn:gatehouse:acr:single-factor';
const MULTI_FACTOR = 'urn:gatehouse:acr:multi-factor';

describe('interop: openid-client as the relying party, sign-in in Chromium', { skip: browserSkip }, () => {
  let browser: TestBrowser;
  before(async () => {
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
  });

  for (const backend of backends()) {
    describe(backend, () => {
      let server: TestServer;
      let issuer: URL;
      let https: ReturnType<typeof trustingFetch>;
      let alice: { user: User; password: string };
      before(async () => {
        // openid-client requires the discovery document's issuer to be the URL it was fetched from
        // (Discovery §4.3), so the issuer is the address the server really listens on.
        const port = await freePort();
        issuer = new URL(`https://localhost:${port}`);
        server = await startTestServer(backend, { port, issuer: issuer.origin }, { transport: 'https' });
        https = trustingFetch(server.ca);
        alice = await server.user(undefined, undefined, {
          email: 'alice@example.com',
          name: 'Alice Example',
        });
      });
      after(async () => {
        https?.close();
        await server?.close();
      });

      /** A client registered with Gatehouse, and openid-client configured for it by discovery. */
      async function relyingParty(
        alg: 'RS256' | 'ES256',
      ): Promise<{ client: Client; config: oidc.Configuration }> {
        const { client, secret } = await server.client({
          name: `openid-client ${alg}`,
          redirect_uris: [CLIENT_REDIRECT],
          grant_types: ['authorization_code', 'refresh_token'],
          scopes: ['openid', 'profile', 'email', 'offline_access'],
          post_logout_redirect_uris: [SIGNED_OUT],
          ...(alg === 'ES256' ? { id_token_signed_response_alg: 'ES256' } : {}),
        });
        const config = await oidc.discovery(
          issuer,
          client.id,
          // Registration §2: the library refuses an ID token signed with any other algorithm.
          { id_token_signed_response_alg: alg },
          alg === 'RS256' ? oidc.ClientSecretBasic(secret) : oidc.ClientSecretPost(secret),
          {
            [oidc.customFetch]: https.fetch,
            // Core §3.1.3.7 lets TLS stand in for the signature check; this makes the library check it
            // against jwks_uri all the same.
            execute: [oidc.enableNonRepudiationChecks],
          },
        );
        return { client, config };
      }

      /**
       * The code flow: openid-client builds the request, Chromium signs in and consents, and the
       * library redeems the code it came back with. `site` is the browser profile, signed in after.
       */
      async function codeFlow(
        config: oidc.Configuration,
        clientName: string,
        site: ClientSite,
        extra: Record<string, string> = {},
        onConsent: (page: ClientSite['page']) => Promise<void> = async () => {},
      ) {
        const verifier = oidc.randomPKCECodeVerifier();
        const nonce = oidc.randomNonce();
        const state = oidc.randomState();
        const request = oidc.buildAuthorizationUrl(config, {
          redirect_uri: CLIENT_REDIRECT,
          scope: SCOPE,
          code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
          code_challenge_method: 'S256',
          nonce,
          state,
          ...extra,
        });
        await site.page.goto(request.href);
        await signIn(site.page, alice.user.username, alice.password);
        await expectConsentPage(site.page, clientName);
        await onConsent(site.page);
        await site.page.getByRole('button', { name: 'Allow' }).click();
        const landed = await landedAtClient(site.page);
        const tokens = await oidc.authorizationCodeGrant(config, landed, {
          pkceCodeVerifier: verifier,
          expectedNonce: nonce,
          expectedState: state,
          idTokenExpected: true,
        });
        return { tokens, nonce };
      }

      /** Runs `test` with a fresh browser profile, closed afterwards. */
      async function inBrowser<T>(test: (site: ClientSite) => Promise<T>): Promise<T> {
        const site = await clientContext(browser);
        try {
          return await test(site);
        } finally {
          await site.context.close();
        }
      }

      it('discovery, the code flow with PKCE, nonce and state, and UserInfo (RS256, client_secret_basic)', async () => {
        const { client, config } = await relyingParty('RS256');
        const metadata = config.serverMetadata();
        assert.equal(metadata.issuer, issuer.origin);
        assert.equal(metadata.userinfo_endpoint, `${issuer.origin}/userinfo`);
        assert.equal(metadata.end_session_endpoint, `${issuer.origin}/logout`);

        const { tokens, nonce } = await inBrowser((site) => codeFlow(config, client.name, site));
        const claims = tokens.claims();
        assert.ok(claims, 'an ID token, validated by openid-client');
        assert.equal(claims.iss, issuer.origin);
        assert.equal(claims.aud, client.id);
        assert.equal(claims.sub, alice.user.id);
        assert.equal(claims.nonce, nonce);
        assert.equal(typeof claims.auth_time, 'number');
        assert.equal(decodeProtectedHeader(tokens.id_token ?? '').alg, 'RS256');
        assert.equal(tokens.token_type.toLowerCase(), 'bearer');
        assert.deepEqual(tokens.scope?.split(' ').sort(), ['email', 'openid', 'profile']);
        assert.equal(tokens.refresh_token, undefined, 'Core §11: no offline_access, no refresh token');

        // Core §5.3.2: the library checks that sub matches the ID token's.
        const userinfo = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
        assert.equal(userinfo.sub, alice.user.id);
        assert.equal(userinfo.email, 'alice@example.com');
        assert.equal(userinfo.email_verified, false);
        assert.equal(userinfo.name, 'Alice Example');
        assert.equal(userinfo.preferred_username, alice.user.username);
      });

      it('amr and acr in the ID token (RFC 8176, Core §2), and step-up by acr_values, the claims parameter and max_age (decision 36)', async () => {
        const { client, config } = await relyingParty('RS256');
        assert.deepEqual(config.serverMetadata().acr_values_supported, [SINGLE_FACTOR, MULTI_FACTOR, 'phr']);
        await inBrowser(async (site) => {
          const { tokens } = await codeFlow(config, client.name, site);
          const claims = tokens.claims();
          assert.ok(claims, 'an ID token, validated by openid-client');
          // A password, and nothing more: never more than what happened.
          assert.deepEqual(claims.amr, ['pwd']);
          assert.equal(claims.acr, SINGLE_FACTOR);
          assert.equal(decodeJwt(tokens.access_token).acr, SINGLE_FACTOR);
          assert.equal(decodeJwt(tokens.access_token).auth_time, claims.auth_time);

          /** A request from the signed-in browser: the page says why it asks again, then the answer. */
          const again = async (extra: Record<string, string>, why: RegExp) => {
            const verifier = oidc.randomPKCECodeVerifier();
            const nonce = oidc.randomNonce();
            const state = oidc.randomState();
            const request = oidc.buildAuthorizationUrl(config, {
              redirect_uri: CLIENT_REDIRECT,
              scope: SCOPE,
              code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
              code_challenge_method: 'S256',
              nonce,
              state,
              ...extra,
            });
            await site.page.goto(request.href);
            await site.page.getByText(why).waitFor();
            await signIn(site.page, alice.user.username, alice.password);
            // Allowed before, from this https client: answered without the consent page.
            const landed = await landedAtClient(site.page);
            return oidc.authorizationCodeGrant(config, landed, {
              pkceCodeVerifier: verifier,
              expectedNonce: nonce,
              expectedState: state,
              idTokenExpected: true,
            });
          };

          // acr_values above the sign-in: asked to sign in again; a password is all this user has, so the
          // ID token says what was reached (a voluntary request, Core §3.1.2.1).
          const stepped = await again(
            { acr_values: MULTI_FACTOR },
            /asks for a stronger sign-in: sign in with your password and a second factor/,
          );
          assert.equal(stepped.claims()?.acr, SINGLE_FACTOR);
          assert.deepEqual(stepped.claims()?.amr, ['pwd']);

          // max_age: two minutes on, a request accepting one minute asks again; openid-client checks
          // auth_time against max_age itself.
          server.clock.advance(120);
          const fresh = await again({ max_age: '60' }, /You signed in a while ago/);
          assert.equal(fresh.claims()?.auth_time, server.clock.now());

          // An essential acr the sign-in cannot reach: asked again, then refused with OpenID Connect
          // Unmet Authentication Requirements 1.0's error.
          await assert.rejects(
            again(
              { claims: JSON.stringify({ id_token: { acr: { essential: true, values: ['phr'] } } }) },
              /asks for a stronger sign-in: sign in with a passkey/,
            ),
            (error: unknown) => {
              assert.ok(error instanceof oidc.AuthorizationResponseError, String(error));
              assert.equal(error.error, 'unmet_authentication_requirements');
              return true;
            },
          );
        });
      });

      it('offline_access with prompt=consent: a refresh returns a new ID token the library validates (Core §12.2)', async () => {
        const { client, config } = await relyingParty('RS256');
        const { tokens } = await inBrowser((site) =>
          codeFlow(config, client.name, site, { scope: `${SCOPE} offline_access`, prompt: 'consent' }),
        );
        const first = tokens.claims();
        assert.ok(first && tokens.refresh_token, 'a refresh token with offline_access');

        const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token);
        const claims = refreshed.claims();
        assert.ok(claims, 'a new ID token');
        assert.notEqual(refreshed.id_token, tokens.id_token);
        assert.equal(claims.iss, issuer.origin);
        assert.equal(claims.aud, client.id);
        assert.equal(claims.sub, first.sub);
        assert.equal(claims.auth_time, first.auth_time);
        assert.equal(claims.nonce, undefined, 'Core §12.2: no nonce on a refresh');
        assert.notEqual(refreshed.refresh_token, tokens.refresh_token, 'rotated');
        const userinfo = await oidc.fetchUserInfo(config, refreshed.access_token, claims.sub);
        assert.equal(userinfo.email, 'alice@example.com');
      });

      // Core §11 lets other conditions than prompt=consent permit offline access: here the consent page
      // lists it, and the user's answer there decides (docs/decisions.md, decision 17).
      it('offline_access without prompt=consent: listed on the consent page; allowed there, a refresh token', async () => {
        const { client, config } = await relyingParty('RS256');
        const offline = (page: ClientSite['page']) =>
          page.getByRole('checkbox', { name: 'Keep access while you are away' });
        const { tokens } = await inBrowser((site) =>
          codeFlow(config, client.name, site, { scope: `${SCOPE} offline_access` }, async (page) => {
            assert.equal(await offline(page).isChecked(), true, 'listed, ticked like every scope');
          }),
        );
        assert.deepEqual(tokens.scope?.split(' ').sort(), ['email', 'offline_access', 'openid', 'profile']);
        assert.ok(tokens.refresh_token, 'offline_access was allowed on the consent page');
        const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token);
        assert.equal(refreshed.claims()?.sub, alice.user.id);
      });

      it('offline_access without prompt=consent, unticked on the consent page: no refresh token', async () => {
        const { client, config } = await relyingParty('RS256');
        const { tokens } = await inBrowser((site) =>
          codeFlow(config, client.name, site, { scope: `${SCOPE} offline_access` }, async (page) => {
            await page.getByRole('checkbox', { name: 'Keep access while you are away' }).uncheck();
          }),
        );
        assert.deepEqual(tokens.scope?.split(' ').sort(), ['email', 'openid', 'profile']);
        assert.equal(tokens.refresh_token, undefined, 'the user unticked offline access');
      });

      it('a client registered for ES256 ID tokens (client_secret_post), then RP-initiated logout', async () => {
        const { client, config } = await relyingParty('ES256');
        await inBrowser(async (site) => {
          const { tokens, nonce } = await codeFlow(config, client.name, site);
          assert.equal(decodeProtectedHeader(tokens.id_token ?? '').alg, 'ES256');
          const claims = tokens.claims();
          assert.equal(claims?.nonce, nonce);
          assert.equal(claims?.sub, alice.user.id);

          // RP-Initiated Logout §2: the library builds the request from end_session_endpoint.
          const logout = oidc.buildEndSessionUrl(config, {
            id_token_hint: tokens.id_token ?? '',
            post_logout_redirect_uri: SIGNED_OUT,
            state: 'bye',
          });
          await site.page.goto(logout.href);
          await site.page.getByRole('heading', { name: 'Sign out of Gatehouse?' }).waitFor();
          await site.page.locator('main').getByRole('button', { name: 'Sign out' }).click();
          const back = await landedAtClient(site.page);
          assert.equal(back.origin + back.pathname, SIGNED_OUT);
          assert.equal(back.searchParams.get('state'), 'bye');
        });
      });
    });
  }
});

// Without a browser: a code seeded as /authorize would have issued it, requests sent to the test port
// for the issuer https://gatehouse.test; the library validates the ID tokens of the code grant and of a
// refresh (Core §12.2), and reads UserInfo (Core §5.3).

const REDIRECT = 'https://rp.example/cb';

for (const backend of backends()) {
  describe(`openid-client interop: discovery, code, refresh and UserInfo (${backend})`, () => {
    let server: TestServer;
    let rp: { client: Client; secret: string };
    let alice: User;
    let config: oidc.Configuration;
    before(async () => {
      server = await startTestServer(backend, {}, { transport: 'https' });
      rp = await server.client({
        name: 'openid-client',
        redirect_uris: [REDIRECT],
        grant_types: ['authorization_code', 'refresh_token'],
        scopes: ['openid', 'profile', 'email', 'offline_access'],
      });
      alice = (
        await server.user('alice', 'correct horse battery', { email: 'alice@example.com', name: 'Alice' })
      ).user;
      // The server answers as https://gatehouse.test (its issuer); requests go to the test port.
      const viaTestServer: oidc.CustomFetch = async (url, options) => {
        const target = new URL(url);
        assert.equal(target.origin, ISSUER);
        const body = options.body === undefined || options.body === null ? undefined : String(options.body);
        const res = await server.http.request(target.pathname + target.search, {
          method: options.method,
          headers: options.headers,
          ...(body === undefined ? {} : { body }),
        });
        const headers = new Headers();
        for (const [name, value] of Object.entries(res.headers)) {
          if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
        }
        return new Response(res.status === 204 ? null : res.text, { status: res.status, headers });
      };
      config = await oidc.discovery(
        new URL(ISSUER),
        rp.client.id,
        undefined,
        oidc.ClientSecretBasic(rp.secret),
        { [oidc.customFetch]: viaTestServer },
      );
      config[oidc.customFetch] = viaTestServer;
    });
    after(async () => {
      await server.close();
    });

    it('validates the code grant’s and the refresh’s ID tokens, and reads UserInfo with the access token', async () => {
      assert.equal(config.serverMetadata().userinfo_endpoint, `${ISSUER}/userinfo`);
      const nonce = oidc.randomNonce();
      const { code } = await server.seedCode({
        client: rp.client,
        user: alice,
        scope: ['openid', 'profile', 'email', 'offline_access'],
        nonce,
        authTime: server.clock.now() - 5,
        sid: 'sid-interop',
      });
      // The callback as /authorize sends it: with iss (RFC 9207 §2), which the library demands once
      // the metadata says authorization_response_iss_parameter_supported.
      const callback = new URL(`${REDIRECT}?${new URLSearchParams({ code, iss: ISSUER }).toString()}`);
      const tokens = await oidc.authorizationCodeGrant(config, callback, {
        expectedNonce: nonce,
        idTokenExpected: true,
      });
      const claims = tokens.claims();
      assert.ok(claims);
      assert.equal(claims.sub, alice.id);
      assert.equal(claims.sid, 'sid-interop');
      assert.ok(tokens.refresh_token, 'offline_access was granted');

      const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token);
      const again = refreshed.claims();
      assert.ok(again, 'a new ID token on refresh (Core §12.2)');
      assert.deepEqual([again.sub, again.auth_time, again.sid], [claims.sub, claims.auth_time, claims.sid]);
      assert.equal(again.nonce, undefined);

      const info = await oidc.fetchUserInfo(config, refreshed.access_token, claims.sub);
      assert.deepEqual(info, {
        sub: alice.id,
        name: 'Alice',
        preferred_username: 'alice',
        updated_at: alice.updatedAt,
        email: 'alice@example.com',
        email_verified: false,
      });
    });
  });
}
