import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import {
  authorizeUrl,
  browserSkip,
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

describe('implicit flow and connected apps in Chromium', { skip: browserSkip }, () => {
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
      before(async () => {
        server = await startTestServer(backend, {}, { transport: 'https' });
        await describeScopes(server, { read: 'Read your notes', write: 'Change and delete your notes' });
      });
      after(async () => {
        await server.close();
      });

      it('returns the access token in the fragment, never in the query and never with a refresh token', async () => {
        const { client } = await server.client({
          name: 'Browser App',
          redirect_uris: [CLIENT_REDIRECT],
          grant_types: ['implicit'],
          scopes: ['read', 'write'],
          public: true,
        });
        const { user, password } = await server.user();
        const { context, page } = await clientContext(browser);
        const before = browser.client.requests.length;
        await page.goto(
          authorizeUrl(server, {
            response_type: 'token',
            client_id: client.id,
            scope: 'read write',
            state: 'imp/1',
          }),
        );
        await signIn(page, user.username, password);
        await expectConsentPage(page, 'Browser App');
        await page.getByLabel('Change and delete your notes').uncheck();
        await page.getByRole('button', { name: 'Allow' }).click();
        const landed = await landedAtClient(page);

        assert.equal(landed.search, '', 'nothing in the query');
        const fragment = new URLSearchParams(landed.hash.slice(1));
        assert.equal(fragment.get('token_type'), 'bearer');
        assert.equal(fragment.get('state'), 'imp/1');
        assert.equal(fragment.get('scope'), 'read');
        assert.equal(fragment.get('expires_in'), '3600');
        assert.equal(fragment.get('refresh_token'), null);
        // The fragment never reached the client's server.
        const requested = browser.client.requests.slice(before).filter((path) => path !== '/favicon.ico');
        assert.deepEqual(requested, ['/cb']);

        const jwks = (await server.http.request('/jwks')).json as Parameters<typeof createLocalJWKSet>[0];
        const { payload } = await jwtVerify(fragment.get('access_token') ?? '', createLocalJWKSet(jwks), {
          issuer: 'https://gatehouse.test',
          currentDate: new Date(server.clock.now() * 1000),
        });
        assert.equal(payload.sub, user.id);
        assert.equal(payload.client_id, client.id);
        assert.equal(payload.scope, 'read');
        assert.equal(typeof payload.gid, 'string');
        await context.close();
      });

      it('lists connected apps with scope and lifetime; Revoke ends refresh and access tokens at once', async () => {
        const { client, secret } = await server.client({
          name: 'Calendar Sync',
          redirect_uris: [CLIENT_REDIRECT],
          scopes: ['read', 'write'],
        });
        const other = await server.client({
          name: 'Other App',
          redirect_uris: [CLIENT_REDIRECT],
          scopes: ['read'],
        });
        const { user, password } = await server.user();
        const { context, page } = await clientContext(browser);

        const authorize = async (clientId: string, lifetime: string) => {
          const pkce = pkcePair();
          await page.goto(
            authorizeUrl(server, {
              response_type: 'code',
              client_id: clientId,
              scope: 'read',
              code_challenge: pkce.challenge,
              code_challenge_method: 'S256',
            }),
          );
          if (await page.getByLabel('Username').isVisible()) await signIn(page, user.username, password);
          await page.getByLabel('Access valid for').selectOption(lifetime);
          await page.getByRole('button', { name: 'Allow' }).click();
          return {
            code: (await landedAtClient(page)).searchParams.get('code') ?? '',
            verifier: pkce.verifier,
          };
        };
        const first = await authorize(client.id, '86400');
        const tokens = await server.http.token(
          {
            grant_type: 'authorization_code',
            code: first.code,
            redirect_uri: CLIENT_REDIRECT,
            code_verifier: first.verifier,
          },
          { id: client.id, secret },
        );
        assert.equal(tokens.status, 200, tokens.text);
        const { access_token: accessToken, refresh_token: refreshToken } = tokens.json as {
          access_token: string;
          refresh_token: string;
        };
        await authorize(other.client.id, 'forever');

        // Reached from the navigation of every signed-in page, the consent page among them.
        await page.goto(
          authorizeUrl(server, { response_type: 'code', client_id: client.id, prompt: 'consent' }),
        );
        await expectConsentPage(page, 'Calendar Sync');
        await page.getByRole('link', { name: 'Connected apps' }).click();
        await page.getByRole('heading', { name: 'Connected apps', level: 1 }).waitFor();
        const entry = page.locator('li.app', { has: page.getByRole('heading', { name: 'Calendar Sync' }) });
        assert.match(await entry.innerText(), /Read your notes/);
        const validUntil = new Date((server.clock.now() + 86400) * 1000).toISOString().slice(0, 10);
        assert.match(await entry.innerText(), new RegExp(`Valid until\\s+${validUntil}`));
        const otherEntry = page.locator('li.app', { has: page.getByRole('heading', { name: 'Other App' }) });
        assert.match(await otherEntry.innerText(), /Until you revoke it/);

        const introspect = async () =>
          (
            await server.http.request('/introspect', {
              form: { token: accessToken },
              headers: { authorization: 'Basic ' + Buffer.from(`${client.id}:${secret}`).toString('base64') },
            })
          ).json as { active: boolean };
        assert.equal((await introspect()).active, true);

        await entry.getByRole('button', { name: 'Revoke' }).click();
        await page.getByRole('status').filter({ hasText: 'Calendar Sync' }).waitFor();
        assert.equal(await page.getByRole('heading', { name: 'Calendar Sync' }).count(), 0);
        assert.equal(await page.getByRole('heading', { name: 'Other App' }).count(), 1);

        const refreshed = await server.http.token(
          { grant_type: 'refresh_token', refresh_token: refreshToken },
          { id: client.id, secret },
        );
        assert.equal(refreshed.status, 400);
        assert.equal((refreshed.json as { error: string }).error, 'invalid_grant');
        assert.equal((await introspect()).active, false);
        await context.close();
      });
    });
  }
});
