import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '../../src/core/model.js';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import {
  authorizeUrl,
  browserSkip,
  CLIENT_ORIGIN,
  CLIENT_REDIRECT,
  clientContext,
  describeScopes,
  expectConsentPage,
  landedAtClient,
  launchChromium,
  pkcePair,
  signIn,
  type TestBrowser,
} from '../helpers/browser-pages.js';

interface TokenBody {
  access_token: string;
  refresh_token?: string;
  scope?: string;
  error?: string;
}

describe('authorization code flow in Chromium', { skip: browserSkip }, () => {
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
      let client: Client;
      let secret: string;

      before(async () => {
        server = await startTestServer(backend, {}, { transport: 'https' });
        await describeScopes(server, { read: 'Read your notes', write: 'Change and delete your notes' });
        ({ client, secret } = await server.client({
          name: 'Notes App',
          redirect_uris: [CLIENT_REDIRECT],
          scopes: ['read', 'write'],
        }));
      });
      after(async () => {
        await server.close();
      });

      const exchange = (code: string, verifier: string) =>
        server.http.token(
          { grant_type: 'authorization_code', code, redirect_uri: CLIENT_REDIRECT, code_verifier: verifier },
          { id: client.id, secret },
        );
      const refresh = (refreshToken: string) =>
        server.http.token(
          { grant_type: 'refresh_token', refresh_token: refreshToken },
          { id: client.id, secret },
        );

      it('signs in, narrows the scope on the consent page, and gets a code that /token exchanges', async () => {
        const { user, password } = await server.user();
        const { context, page } = await clientContext(browser);
        const pkce = pkcePair();
        await page.goto(
          authorizeUrl(server, {
            response_type: 'code',
            client_id: client.id,
            redirect_uri: CLIENT_REDIRECT,
            scope: 'read write',
            state: 'xyz 123',
            code_challenge: pkce.challenge,
            code_challenge_method: 'S256',
          }),
        );
        await signIn(page, user.username, password);
        await expectConsentPage(page, 'Notes App');

        // One checkbox per scope, checked, valued by name and labelled by description.
        const read = page.getByLabel('Read your notes');
        const write = page.getByLabel('Change and delete your notes');
        assert.equal(await read.getAttribute('value'), 'read');
        assert.equal(await write.getAttribute('value'), 'write');
        assert.equal(await read.isChecked(), true);
        assert.equal(await write.isChecked(), true);
        const lifetime = page.getByLabel('Access valid for');
        assert.equal(await lifetime.getAttribute('name'), 'lifetime');
        const options = await lifetime
          .locator('option')
          .evaluateAll((els) => els.map((el) => (el as HTMLOptionElement).value));
        assert.deepEqual(options, ['3600', '86400', '2592000', 'forever']);

        await write.uncheck();
        await lifetime.selectOption('forever');
        await page.getByRole('button', { name: 'Allow' }).click();
        const landed = await landedAtClient(page);
        assert.equal(landed.origin + landed.pathname, CLIENT_REDIRECT);
        assert.equal(landed.hash, '');
        assert.equal(landed.searchParams.get('state'), 'xyz 123');
        const code = landed.searchParams.get('code') ?? '';
        assert.match(code, /^ac_/);

        // Without the verifier the code is refused; with it, the narrowed scope is what is issued.
        const withoutVerifier = await server.http.token(
          { grant_type: 'authorization_code', code, redirect_uri: CLIENT_REDIRECT },
          { id: client.id, secret },
        );
        assert.equal(withoutVerifier.status, 400);
        const res = await exchange(code, pkce.verifier);
        assert.equal(res.status, 200, res.text);
        const body = res.json as TokenBody;
        assert.equal(body.scope, 'read');
        assert.match(body.refresh_token ?? '', /^rt_/);

        const grants = await server.store.storage.grants.listByUser(user.id);
        assert.equal(grants.length, 1);
        assert.deepEqual(grants[0]?.scope, ['read']);
        assert.equal(grants[0]?.expiresAt, null);
        await context.close();
      });

      it('remembers a consent that covers the request, and asks again for more or for prompt=consent', async () => {
        const { user, password } = await server.user();
        const { context, page } = await clientContext(browser);
        const request = (extra: Record<string, string>) =>
          authorizeUrl(server, {
            response_type: 'code',
            client_id: client.id,
            code_challenge: pkcePair().challenge,
            code_challenge_method: 'S256',
            ...extra,
          });
        await page.goto(request({ scope: 'read', state: 'one' }));
        await signIn(page, user.username, password);
        await expectConsentPage(page, 'Notes App');
        await page.getByRole('button', { name: 'Allow' }).click();
        assert.equal((await landedAtClient(page)).searchParams.get('state'), 'one');

        // Same request again: straight back to the client, no page in between.
        const second = await page.goto(request({ scope: 'read', state: 'two' }));
        const landed = new URL(page.url());
        assert.equal(landed.origin + landed.pathname, CLIENT_REDIRECT);
        assert.equal(landed.searchParams.get('state'), 'two');
        assert.match(landed.searchParams.get('code') ?? '', /^ac_/);
        assert.equal(landed.searchParams.get('iss'), 'https://gatehouse.test', 'RFC 9207 §2');
        assert.equal(second?.request().redirectedFrom()?.url().startsWith(`${server.url}/authorize?`), true);

        // prompt=consent shows the page although the grant covers the request.
        await page.goto(request({ scope: 'read', state: 'three', prompt: 'consent' }));
        await expectConsentPage(page, 'Notes App');

        // Asking for more than was granted shows the page too.
        await page.goto(request({ scope: 'read write', state: 'four' }));
        await expectConsentPage(page, 'Notes App');
        await page.getByRole('button', { name: 'Allow' }).click();
        assert.equal((await landedAtClient(page)).searchParams.get('state'), 'four');

        // The wider consent stands; the first, which it covers (same lifetime), may stay beside it.
        const now = server.clock.now();
        const live = (await server.store.storage.grants.listByUser(user.id)).filter(
          (g) => g.revokedAt === null && (g.expiresAt === null || g.expiresAt > now),
        );
        assert.ok(live.some((g) => g.scope.join(' ') === 'read write'));
        assert.ok(live.every((g) => g.scope.every((name) => ['read', 'write'].includes(name))));
        await context.close();
      });

      it('redirects access_denied with the state when the user denies', async () => {
        const { user, password } = await server.user();
        const { context, page } = await clientContext(browser);
        await page.goto(
          authorizeUrl(server, {
            response_type: 'code',
            client_id: client.id,
            scope: 'read',
            state: 'no thanks',
          }),
        );
        await signIn(page, user.username, password);
        await expectConsentPage(page, 'Notes App');
        await page.getByRole('button', { name: 'Deny' }).click();
        const landed = await landedAtClient(page);
        assert.equal(landed.searchParams.get('error'), 'access_denied');
        assert.equal(landed.searchParams.get('state'), 'no thanks');
        assert.equal(landed.searchParams.get('code'), null);
        assert.deepEqual(await server.store.storage.grants.listByUser(user.id), []);
        await context.close();
      });

      it('shows a 400 page for an unregistered redirect URI and never goes there', async () => {
        const { context, page } = await clientContext(browser);
        const before = browser.client.requests.length;
        const response = await page.goto(
          authorizeUrl(server, {
            response_type: 'code',
            client_id: client.id,
            redirect_uri: 'https://client.test/evil',
            state: 's',
          }),
        );
        assert.equal(response?.status(), 400);
        assert.equal(new URL(page.url()).origin, server.url);
        await page.getByRole('heading', { name: 'This request cannot be completed' }).waitFor();
        assert.deepEqual(browser.client.requests.slice(before), []);
        await context.close();
      });

      it('bounds the grant by the lifetime chosen: one hour, then refresh fails', async () => {
        const { user, password } = await server.user();
        const { context, page } = await clientContext(browser);
        const pkce = pkcePair();
        await page.goto(
          authorizeUrl(server, {
            response_type: 'code',
            client_id: client.id,
            scope: 'read',
            code_challenge: pkce.challenge,
            code_challenge_method: 'S256',
          }),
        );
        await signIn(page, user.username, password);
        await expectConsentPage(page, 'Notes App');
        await page.getByLabel('Access valid for').selectOption('3600');
        await page.getByRole('button', { name: 'Allow' }).click();
        const code = (await landedAtClient(page)).searchParams.get('code') ?? '';
        const issued = await exchange(code, pkce.verifier);
        assert.equal(issued.status, 200, issued.text);
        const first = issued.json as TokenBody;

        const grant = (await server.store.storage.grants.listByUser(user.id))[0];
        assert.equal(grant?.expiresAt, server.clock.now() + 3600);

        server.clock.advance(1800);
        const inside = await refresh(first.refresh_token ?? '');
        assert.equal(inside.status, 200, inside.text);
        server.clock.advance(1801);
        const outside = await refresh((inside.json as TokenBody).refresh_token ?? '');
        assert.equal(outside.status, 400, outside.text);
        assert.equal((outside.json as TokenBody).error, 'invalid_grant');
        await context.close();
      });

      it('refuses form posts without the CSRF token of the browser (403)', async () => {
        const { user, password } = await server.user();
        const { context, page } = await clientContext(browser);
        await page.goto(authorizeUrl(server, { response_type: 'code', client_id: client.id, scope: 'read' }));
        await signIn(page, user.username, password);
        await expectConsentPage(page, 'Notes App');
        const request = await page.locator('input[name=request]').getAttribute('value');
        const token = (await page.locator('input[name=csrf_token]').first().getAttribute('value')) ?? '';
        assert.ok(token.length > 20);

        // page.request shares the browser's cookies, so only the token differs.
        const consent = (form: Record<string, string>) =>
          page.request.post(`${server.url}/consent`, { form, maxRedirects: 0 });
        const base = { request: request ?? '', scope: 'read', lifetime: '3600', decision: 'allow' };
        assert.equal((await consent(base)).status(), 403);
        assert.equal((await consent({ ...base, csrf_token: `${token.slice(0, -2)}AA` })).status(), 403);
        assert.equal(
          (
            await page.request.post(`${server.url}/account/apps/${client.id}/revoke`, {
              form: {},
              maxRedirects: 0,
            })
          ).status(),
          403,
        );
        assert.equal(
          (
            await page.request.post(`${server.url}/sign-out`, {
              form: { csrf_token: 'forged' },
              maxRedirects: 0,
            })
          ).status(),
          403,
        );
        assert.deepEqual(await server.store.storage.grants.listByUser(user.id), []);
        // The real token works (the check above failed for the right reason).
        const accepted = await consent({ ...base, csrf_token: token });
        assert.equal(accepted.status(), 302);
        assert.match(accepted.headers().location ?? '', /^https:\/\/client\.test\/cb\?code=ac_/);

        // A token is bound to its browser: another profile's cookie with this token is refused.
        const other = await clientContext(browser);
        await other.page.goto(`${server.url}/sign-in`);
        const stolen = await other.page.request.post(`${server.url}/sign-in`, {
          form: { csrf_token: token, username: user.username, password, next: '/account/apps' },
          maxRedirects: 0,
        });
        assert.equal(stolen.status(), 403);
        await other.context.close();
        await context.close();
      });

      it('sends framing and content-security headers on every page, and the browser refuses to frame them', async () => {
        const { context, page } = await clientContext(browser);
        const pages = [
          authorizeUrl(server, { response_type: 'code', client_id: client.id }),
          `${server.url}/sign-in`,
          authorizeUrl(server, { response_type: 'code', client_id: 'nobody' }),
        ];
        for (const url of pages) {
          const response = await page.goto(url);
          const headers = response?.headers() ?? {};
          assert.equal(headers['x-frame-options'], 'DENY', url);
          assert.match(headers['content-security-policy'] ?? '', /frame-ancestors 'none'/, url);
          assert.match(headers['content-security-policy'] ?? '', /script-src 'self'/, url);
        }

        // A page on another origin tries to frame the sign-in page.
        await page.goto(`${CLIENT_ORIGIN}/frame`);
        await page.setContent(`<iframe name="victim" src="${server.url}/sign-in"></iframe>`);
        await page.waitForTimeout(500);
        const frame = page.frame({ name: 'victim' });
        assert.ok(frame !== null);
        assert.equal(
          await frame.locator('input[name=password]').count(),
          0,
          'the framed page must not render',
        );
        // Chromium replaces a refused frame with its error page.
        assert.equal(frame.url(), 'chrome-error://chromewebdata/');
        await context.close();
      });
    });
  }
});
