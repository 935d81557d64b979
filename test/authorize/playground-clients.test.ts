import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ClientRegistry } from '../../src/core/clients/client-registry.js';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { FormBrowser } from '../helpers/form-browser.js';

for (const backend of backends()) {
  describe(`the playground lists only clients registered for it (${backend})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(backend);
    });
    after(async () => {
      await server.close();
    });

    /** A GET with the Host header given: the page's text. */
    const withHost = (path: string, host: string, cookie: string) =>
      server.http.request(path, { headers: { host, cookie } });
    /** The address a request names in its Host header, other than the issuer's. */
    const requestHost = '127.0.0.1:8443';

    it('shows clients with its callback under the issuer as a redirect URI, and no other client', async () => {
      const underIssuer = await server.client({
        name: 'Playground under the issuer',
        redirect_uris: ['https://gatehouse.test/playground/callback'],
        scopes: ['profile'],
      });
      // The address the request came to is the caller's choice, not the operator's: never a callback.
      const underRequestHost = await server.client({
        name: 'Playground at the request host',
        redirect_uris: [`https://${requestHost}/playground/callback`],
        scopes: ['profile'],
      });
      const underForgedHost = await server.client({
        name: 'Playground at a forged host',
        redirect_uris: ['https://attacker.example/playground/callback'],
        scopes: ['profile'],
      });
      // A client that registered itself (RFC 7591) is never listed, whatever its redirect URIs.
      const selfRegistered = await new ClientRegistry(server.store.storage, server.clock).create(
        { name: 'Self-registered', redirect_uris: ['https://gatehouse.test/playground/callback'] },
        { registration: 'open', registrationAccessTokenHash: null, registrationScopes: ['profile'] },
      );
      const admin = await server.client({
        name: 'ops console',
        grant_types: ['client_credentials'],
        scopes: ['admin'],
      });
      const unrelated = await server.client({
        name: 'Notes App',
        redirect_uris: ['https://notes.example/cb', 'https://evil.example/playground/callback'],
        scopes: ['read'],
      });

      const { user, password } = await server.user();
      const browser = new FormBrowser(server);
      await browser.signIn(user.username, password, '/playground');
      const page = await withHost('/playground', requestHost, browser.currentCookie ?? '');
      const forged = await withHost('/playground', 'attacker.example', browser.currentCookie ?? '');
      for (const res of [page, forged]) {
        assert.equal(res.status, 200);
        assert.ok(res.text.includes(underIssuer.client.id));
        for (const hidden of [
          underRequestHost.client.id,
          underForgedHost.client.id,
          selfRegistered.client.id,
          admin.client.id,
          'ops console',
          unrelated.client.id,
          'notes.example',
        ]) {
          assert.ok(!res.text.includes(hidden), `${hidden} is not in the page`);
        }
      }
    });
  });
}
