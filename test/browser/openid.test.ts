import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createLocalJWKSet, jwtVerify, type JWTPayload } from 'jose';
import type { Client } from '../../src/core/model.js';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import {
  authorizeUrl,
  browserSkip,
  CLIENT_ORIGIN,
  CLIENT_REDIRECT,
  clientContext,
  expectConsentPage,
  landedAtClient,
  launchChromium,
  signIn,
  type TestBrowser,
} from '../helpers/browser-pages.js';

// OpenID Connect in a real browser: the code, implicit and hybrid flows, form_post and RP-initiated
// logout, with every ID token verified against /jwks and its nonce, at_hash and c_hash computed here.

const SIGNED_OUT = `${CLIENT_ORIGIN}/signed-out`;

/** Core §3.3.2.11: base64url of the left-most half of SHA-256 of the value's ASCII octets (RS256). */
function leftHalfHash(value: string): string {
  return createHash('sha256').update(value, 'ascii').digest().subarray(0, 16).toString('base64url');
}

describe('OpenID Connect in Chromium', { skip: browserSkip }, () => {
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
      let rp: Client;
      let secret: string;
      before(async () => {
        server = await startTestServer(backend, {}, { transport: 'https' });
        ({ client: rp, secret } = await server.client({
          name: 'Relying Party',
          redirect_uris: [CLIENT_REDIRECT],
          grant_types: ['authorization_code', 'implicit'],
          scopes: ['openid', 'profile', 'email'],
          post_logout_redirect_uris: [SIGNED_OUT],
        }));
      });
      after(async () => {
        await server.close();
      });

      async function verifyIdToken(idToken: string, nonce: string): Promise<JWTPayload> {
        const jwks = (await server.http.request('/jwks')).json as Parameters<typeof createLocalJWKSet>[0];
        const { payload, protectedHeader } = await jwtVerify(idToken, createLocalJWKSet(jwks), {
          issuer: 'https://gatehouse.test',
          audience: rp.id,
          currentDate: new Date(server.clock.now() * 1000),
        });
        assert.equal(protectedHeader.alg, 'RS256');
        assert.equal(payload.nonce, nonce);
        assert.equal(typeof payload.auth_time, 'number');
        assert.equal(typeof payload.sid, 'string');
        return payload;
      }

      async function exchange(code: string): Promise<{ id_token?: string; access_token: string }> {
        const res = await server.http.token(
          { grant_type: 'authorization_code', code, redirect_uri: CLIENT_REDIRECT },
          { id: rp.id, secret },
        );
        assert.equal(res.status, 200, res.text);
        return res.json as { id_token?: string; access_token: string };
      }

      const request = (params: Record<string, string>) =>
        authorizeUrl(server, {
          client_id: rp.id,
          redirect_uri: CLIENT_REDIRECT,
          scope: 'openid profile email',
          ...params,
        });

      it('oidcc-server: the code flow with openid through sign-in and consent', async () => {
        const { user, password } = await server.user();
        const { context, page } = await clientContext(browser);
        await page.goto(request({ response_type: 'code', state: 'code/1', nonce: 'nonce-code' }));
        await signIn(page, user.username, password);
        await expectConsentPage(page, 'Relying Party');
        // openid is the sign-in itself: named plainly, with no box to untick.
        await page.getByText('Sign you in with your Gatehouse account').waitFor();
        assert.equal(await page.locator('input[name="scope"][value="openid"]').count(), 0);
        assert.equal(await page.getByLabel('Your email address').getAttribute('value'), 'email');
        await page.getByLabel('Your email address').uncheck();
        await page.getByRole('button', { name: 'Allow' }).click();
        const landed = await landedAtClient(page);
        assert.equal(landed.hash, '');
        assert.equal(landed.searchParams.get('state'), 'code/1');
        const body = await exchange(landed.searchParams.get('code') ?? '');
        const claims = await verifyIdToken(body.id_token ?? '', 'nonce-code');
        assert.equal(claims.sub, user.id);
        assert.equal(claims.auth_time, server.clock.now());
        await context.close();
      });

      it('oidcc-server (implicit): id_token token from the fragment, with at_hash', async () => {
        const { user, password } = await server.user();
        const { context, page } = await clientContext(browser);
        const before = browser.client.requests.length;
        await page.goto(request({ response_type: 'id_token token', state: 'imp', nonce: 'nonce-implicit' }));
        await signIn(page, user.username, password);
        await expectConsentPage(page, 'Relying Party');
        await page.getByRole('button', { name: 'Allow' }).click();
        const landed = await landedAtClient(page);
        assert.equal(landed.search, '', 'nothing in the query');
        const fragment = new URLSearchParams(landed.hash.slice(1));
        assert.equal(fragment.get('state'), 'imp');
        assert.equal(fragment.get('token_type'), 'bearer');
        const accessToken = fragment.get('access_token') ?? '';
        const claims = await verifyIdToken(fragment.get('id_token') ?? '', 'nonce-implicit');
        assert.equal(claims.sub, user.id);
        assert.equal(claims.at_hash, leftHalfHash(accessToken));
        assert.equal(claims.c_hash, undefined);
        // The fragment never reached the client's server.
        const requested = browser.client.requests.slice(before).filter((path) => path !== '/favicon.ico');
        assert.deepEqual(requested, ['/cb']);
        await context.close();
      });

      it('oidcc-server (hybrid): code id_token from the fragment, with c_hash; the code gives the same nonce', async () => {
        const { user, password } = await server.user();
        const { context, page } = await clientContext(browser);
        await page.goto(request({ response_type: 'code id_token', state: 'hyb', nonce: 'nonce-hybrid' }));
        await signIn(page, user.username, password);
        await expectConsentPage(page, 'Relying Party');
        await page.getByRole('button', { name: 'Allow' }).click();
        const landed = await landedAtClient(page);
        assert.equal(landed.search, '');
        const fragment = new URLSearchParams(landed.hash.slice(1));
        assert.equal(fragment.get('state'), 'hyb');
        const code = fragment.get('code') ?? '';
        const fromAuthorize = await verifyIdToken(fragment.get('id_token') ?? '', 'nonce-hybrid');
        assert.equal(fromAuthorize.c_hash, leftHalfHash(code));
        assert.equal(fromAuthorize.at_hash, undefined);
        const fromToken = await verifyIdToken((await exchange(code)).id_token ?? '', 'nonce-hybrid');
        assert.equal(fromToken.sub, fromAuthorize.sub);
        assert.equal(fromToken.auth_time, fromAuthorize.auth_time);
        assert.equal(fromToken.sid, fromAuthorize.sid);
        await context.close();
      });

      it('form_post: the response page posts itself to the client', async () => {
        const { user, password } = await server.user();
        const { context, page } = await clientContext(browser);
        const posted = browser.client.posts.length;
        await page.goto(
          request({
            response_type: 'code id_token',
            response_mode: 'form_post',
            state: 'fp 1',
            nonce: 'nonce-fp',
          }),
        );
        await signIn(page, user.username, password);
        await expectConsentPage(page, 'Relying Party');
        await page.getByRole('button', { name: 'Allow' }).click();
        const landed = await landedAtClient(page);
        assert.equal(landed.toString(), CLIENT_REDIRECT, 'no query, no fragment');
        await page.waitForFunction(() => document.title === 'client');
        const [post] = browser.client.posts.slice(posted);
        assert.equal(post?.path, '/cb');
        const form = post?.form ?? new URLSearchParams();
        assert.deepEqual([...form.keys()], ['code', 'id_token', 'state', 'iss']);
        assert.equal(form.get('state'), 'fp 1');
        const claims = await verifyIdToken(form.get('id_token') ?? '', 'nonce-fp');
        assert.equal(claims.c_hash, leftHalfHash(form.get('code') ?? ''));
        assert.ok((await exchange(form.get('code') ?? '')).access_token);
        await context.close();
      });

      it('oidcc-rp-initiated-logout: "Sign out", back with state, and the session is over', async () => {
        const { user, password } = await server.user();
        const { context, page } = await clientContext(browser);
        await page.goto(request({ response_type: 'id_token', state: 'in', nonce: 'nonce-logout' }));
        await signIn(page, user.username, password);
        await expectConsentPage(page, 'Relying Party');
        await page.getByRole('button', { name: 'Allow' }).click();
        const idToken = new URLSearchParams((await landedAtClient(page)).hash.slice(1)).get('id_token') ?? '';
        await verifyIdToken(idToken, 'nonce-logout');

        const logout = new URLSearchParams({
          id_token_hint: idToken,
          post_logout_redirect_uri: SIGNED_OUT,
          state: 'out/1',
        });
        await page.goto(`${server.url}/logout?${logout.toString()}`);
        await page.getByRole('heading', { name: 'Sign out of Gatehouse?' }).waitFor();
        await page.getByText('Relying Party asks you to sign out.').waitFor();
        // One "Sign out" on the page: the header's, which would not return to the application, is not
        // there to be mistaken for the confirmation's (by sight or by a screen reader's button list).
        const signOut = page.getByRole('button', { name: 'Sign out' });
        assert.equal(await signOut.count(), 1);
        assert.equal(await page.locator('main').getByRole('button', { name: 'Sign out' }).count(), 1);
        await signOut.click();
        const back = await landedAtClient(page);
        assert.equal(back.origin + back.pathname, SIGNED_OUT);
        assert.equal(back.searchParams.get('state'), 'out/1');

        // Signed out: prompt=none now answers login_required.
        await page.goto(request({ response_type: 'code', prompt: 'none', state: 'again' }));
        const again = await landedAtClient(page);
        assert.equal(again.searchParams.get('error'), 'login_required');
        assert.equal(again.searchParams.get('state'), 'again');
        await context.close();
      });
    });
  }
});
