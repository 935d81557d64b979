import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Client } from '../../src/core/model.js';
import { backends } from '../helpers/backends.js';
import type { HttpResponse } from '../helpers/https-client.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { FormBrowser } from '../helpers/form-browser.js';

function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

function authorizePath(params: Record<string, string>): string {
  return `/authorize?${new URLSearchParams(params).toString()}`;
}

function isConsentPage(res: HttpResponse): boolean {
  return res.status === 200 && /name="decision" value="allow"/.test(res.text);
}

for (const backend of backends()) {
  describe(`remembered consent (${backend})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(backend);
    });
    after(async () => {
      await server.close();
    });

    /** Signs a new browser in and consents once to the request; returns the browser. */
    async function consentOnce(path: string): Promise<FormBrowser> {
      const { user, password } = await server.user();
      const browser = new FormBrowser(server);
      const signedIn = await browser.signIn(user.username, password, path);
      assert.equal(signedIn.status, 303);
      const consent = await browser.get(path);
      assert.ok(isConsentPage(consent), consent.text.slice(0, 300));
      const allowed = await browser.post('/consent', {
        csrf_token: FormBrowser.hidden(consent, 'csrf_token'),
        request: FormBrowser.hidden(consent, 'request'),
        decision: 'allow',
        scope: 'read',
        lifetime: 'forever',
      });
      assert.equal(allowed.status, 302);
      return browser;
    }

    async function registered(input: {
      redirect: string;
      public?: boolean;
      grantTypes?: ('authorization_code' | 'implicit')[];
    }): Promise<Client> {
      return (
        await server.client({
          name: 'Native App',
          redirect_uris: [input.redirect],
          scopes: ['read'],
          public: input.public ?? false,
          grant_types: input.grantTypes ?? ['authorization_code'],
        })
      ).client;
    }

    it('asks again for a public native client, so a code for an attacker-chosen challenge needs the user (RFC 8252 §8.6)', async () => {
      const redirect = 'com.example.app:/cb';
      const client = await registered({ redirect, public: true });
      const request = (challenge: string) =>
        authorizePath({
          response_type: 'code',
          client_id: client.id,
          redirect_uri: redirect,
          scope: 'read',
          code_challenge: challenge,
          code_challenge_method: 'S256',
        });
      const browser = await consentOnce(request(pkce().challenge));

      // An attacker's app sends the victim's browser with its own challenge: the page is shown, no code.
      const attacker = pkce();
      const res = await browser.get(request(attacker.challenge));
      assert.ok(
        isConsentPage(res),
        `expected the consent page, got ${res.status} ${String(res.headers.location)}`,
      );
      assert.equal(res.headers.location, undefined);
    });

    it('asks again for a confidential client whose redirect is a private-use scheme or loopback', async () => {
      for (const redirect of [
        'com.example.desktop:/cb',
        'http://127.0.0.1:8123/cb',
        'https://localhost/cb',
      ]) {
        const client = await registered({ redirect });
        const path = authorizePath({
          response_type: 'code',
          client_id: client.id,
          redirect_uri: redirect,
          scope: 'read',
        });
        const browser = await consentOnce(path);
        assert.ok(isConsentPage(await browser.get(path)), redirect);
      }
    });

    it('asks again for every implicit request, since the token goes straight to the redirect', async () => {
      const redirect = 'https://client.test/cb';
      const client = await registered({ redirect, grantTypes: ['implicit'] });
      const path = authorizePath({ response_type: 'token', client_id: client.id, scope: 'read' });
      const browser = await consentOnce(path);
      const res = await browser.get(path);
      assert.ok(isConsentPage(res));
      assert.equal(res.headers.location, undefined);
    });

    it('asking again keeps what a new consent covers, so an earlier login stays signed in', async () => {
      const redirect = 'com.example.notes:/cb';
      const client = await registered({ redirect, public: true });
      const path = authorizePath({
        response_type: 'code',
        client_id: client.id,
        redirect_uri: redirect,
        scope: 'read',
        code_challenge: pkce().challenge,
        code_challenge_method: 'S256',
      });
      const browser = await consentOnce(path);
      const userId = (await server.store.storage.grants.listByClient(client.id))[0]?.userId ?? '';
      const live = async () =>
        (await server.store.storage.grants.listByUser(userId)).filter((grant) => grant.revokedAt === null);
      const [first] = await live();
      assert.ok(first !== undefined);

      const allow = async (lifetime: string) => {
        const consent = await browser.get(path);
        assert.ok(isConsentPage(consent));
        const res = await browser.post('/consent', {
          csrf_token: FormBrowser.hidden(consent, 'csrf_token'),
          request: FormBrowser.hidden(consent, 'request'),
          decision: 'allow',
          scope: 'read',
          lifetime,
        });
        assert.equal(res.status, 302);
      };
      // The same again, until revoked: the standing grant answers; no second grant.
      await allow('forever');
      assert.deepEqual(
        (await live()).map((grant) => grant.id),
        [first.id],
      );
      // Shorter: the new decision stands and the longer grant ends.
      await allow('3600');
      const shorter = await live();
      assert.equal(shorter.length, 1);
      assert.notEqual(shorter[0]?.id, first.id);
      // The same hour again, later: the earlier grant ends sooner, is covered, and stays.
      server.clock.advance(60);
      await allow('3600');
      assert.equal((await live()).length, 2);
    });

    it('still remembers consent for a confidential client with an https redirect', async () => {
      const redirect = 'https://client.test/cb';
      const client = await registered({ redirect });
      const path = authorizePath({ response_type: 'code', client_id: client.id, scope: 'read' });
      const browser = await consentOnce(path);
      const res = await browser.get(path);
      assert.equal(res.status, 302);
      const location = new URL(String(res.headers.location));
      assert.equal(location.origin + location.pathname, redirect);
      assert.match(location.searchParams.get('code') ?? '', /^ac_/);
    });
  });
}
