import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { FormBrowser } from './form-browser.js';

for (const backend of backends()) {
  describe(`the playground lists only clients registered for it (${backend})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(backend);
    });
    after(async () => {
      await server.close();
    });

    it('shows clients with its callback as a redirect URI, and no other client', async () => {
      const underIssuer = await server.client({
        name: 'Playground under the issuer',
        redirect_uris: ['https://gatehouse.test/playground/callback'],
        scopes: ['profile'],
      });
      const underPageOrigin = await server.client({
        name: 'Playground here',
        redirect_uris: [`${server.http.baseUrl}/playground/callback`],
        scopes: ['profile'],
      });
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
      const page = await browser.get('/playground');
      assert.equal(page.status, 200);
      assert.ok(page.text.includes(underIssuer.client.id));
      assert.ok(page.text.includes(underPageOrigin.client.id));
      for (const hidden of [admin.client.id, 'ops console', unrelated.client.id, 'notes.example']) {
        assert.ok(!page.text.includes(hidden), `${hidden} is not in the page`);
      }
    });
  });
}
