import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '../../src/core/model.js';
import { backends } from '../helpers/backends.js';
import { basicAuth } from '../helpers/https-client.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import {
  authorizeUrl,
  browserSkip,
  CLIENT_REDIRECT,
  clientContext,
  expectConsentPage,
  landedAtClient,
  launchChromium,
  pkcePair,
  signIn,
  type TestBrowser,
} from '../helpers/browser-pages.js';

// RFC 9126 in a real browser: the client pushes its request to /par, Chromium goes to /authorize with
// only client_id and request_uri, signs in (reloading on the way), consents, and lands at the client
// with a code that /token exchanges. Then the same URL again: refused, with a page.

describe('pushed authorization requests in Chromium', { skip: browserSkip }, () => {
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
      let confidential: { client: Client; secret: string };
      let publicClient: Client;

      before(async () => {
        server = await startTestServer(backend, {}, { transport: 'https' });
        confidential = await server.client({
          name: 'Pushing Notes',
          redirect_uris: [CLIENT_REDIRECT],
          scopes: ['read', 'write'],
        });
        publicClient = (
          await server.client({
            name: 'Pushing SPA',
            redirect_uris: [CLIENT_REDIRECT],
            scopes: ['read'],
            public: true,
          })
        ).client;
      });
      after(async () => {
        await server?.close();
      });

      it('a confidential client (Basic): PAR, sign-in, consent, code, token; the request_uri then refused', async () => {
        const { user, password } = await server.user();
        const pkce = pkcePair();
        const pushed = await server.http.request('/par', {
          headers: { authorization: basicAuth(confidential.client.id, confidential.secret) },
          form: {
            response_type: 'code',
            redirect_uri: CLIENT_REDIRECT,
            scope: 'read write',
            state: 'pushed state',
            code_challenge: pkce.challenge,
            code_challenge_method: 'S256',
          },
        });
        assert.equal(pushed.status, 201, pushed.text);
        const { request_uri } = pushed.json as { request_uri: string };
        const url = authorizeUrl(server, { client_id: confidential.client.id, request_uri });

        const { context, page } = await clientContext(browser);
        try {
          await page.goto(url);
          await signIn(page, user.username, password);
          await expectConsentPage(page, 'Pushing Notes');
          await page.getByRole('button', { name: 'Allow' }).click();
          const landed = await landedAtClient(page);
          assert.equal(landed.origin + landed.pathname, CLIENT_REDIRECT);
          assert.equal(landed.searchParams.get('state'), 'pushed state');
          const code = landed.searchParams.get('code') ?? '';
          const token = await server.http.token(
            {
              grant_type: 'authorization_code',
              code,
              redirect_uri: CLIENT_REDIRECT,
              code_verifier: pkce.verifier,
            },
            { id: confidential.client.id, secret: confidential.secret },
          );
          assert.equal(token.status, 200, token.text);
          assert.equal((token.json as { scope: string }).scope, 'read write');

          // Used: the same URL, signed in or not, gets a page and stays at Gatehouse.
          const again = await page.goto(url);
          assert.equal(again?.status(), 400);
          await page.getByRole('heading', { name: 'This request cannot be completed' }).waitFor();
          assert.ok(page.url().startsWith(server.url));
        } finally {
          await context.close();
        }
      });

      it('a public client with PKCE: PAR with client_id, a reload of the sign-in page, consent, token', async () => {
        const { user, password } = await server.user();
        const pkce = pkcePair();
        const pushed = await server.http.request('/par', {
          form: {
            client_id: publicClient.id,
            response_type: 'code',
            redirect_uri: CLIENT_REDIRECT,
            scope: 'read',
            code_challenge: pkce.challenge,
            code_challenge_method: 'S256',
          },
        });
        assert.equal(pushed.status, 201, pushed.text);
        const { request_uri } = pushed.json as { request_uri: string };

        const { context, page } = await clientContext(browser);
        try {
          await page.goto(authorizeUrl(server, { client_id: publicClient.id, request_uri }));
          await page.getByLabel('Username').waitFor();
          // A reload before signing in reads the pushed request again.
          const reloaded = await page.reload();
          assert.equal(reloaded?.status(), 200);
          await signIn(page, user.username, password);
          await expectConsentPage(page, 'Pushing SPA');
          await page.getByRole('button', { name: 'Allow' }).click();
          const landed = await landedAtClient(page);
          const token = await server.http.request('/token', {
            form: {
              grant_type: 'authorization_code',
              client_id: publicClient.id,
              code: landed.searchParams.get('code') ?? '',
              redirect_uri: CLIENT_REDIRECT,
              code_verifier: pkce.verifier,
            },
          });
          assert.equal(token.status, 200, token.text);
        } finally {
          await context.close();
        }
      });
    });
  }
});
