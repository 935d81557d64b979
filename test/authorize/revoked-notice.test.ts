import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { FormBrowser } from '../helpers/form-browser.js';

const NOTICE = /was revoked/;

for (const backend of backends()) {
  describe(`connected apps: the "revoked" notice (${backend})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(backend);
    });
    after(async () => {
      await server.close();
    });

    it('is shown once after a real revocation, and never because of a link', async () => {
      const { client } = await server.client({
        name: 'Notes App',
        redirect_uris: ['https://notes.example/cb'],
        scopes: ['read'],
      });
      const ops = await server.client({
        name: 'ops',
        grant_types: ['client_credentials'],
        scopes: ['admin'],
      });
      const { user, password } = await server.user();
      await server.seedCode({ client, user });
      const browser = new FormBrowser(server);
      await browser.signIn(user.username, password);

      // A link naming any client claims nothing.
      const linked = await browser.get(`/account/apps?revoked=${ops.client.id}`);
      assert.equal(linked.status, 200);
      assert.doesNotMatch(linked.text, NOTICE);
      assert.doesNotMatch(linked.text, /<strong>ops<\/strong>/);

      // Revoking a client the user never allowed revokes nothing, and says nothing.
      const nothing = await browser.post(`/account/apps/${ops.client.id}/revoke`, {
        csrf_token: FormBrowser.hidden(linked, 'csrf_token'),
      });
      assert.equal(nothing.status, 303);
      assert.doesNotMatch((await browser.get('/account/apps')).text, NOTICE);

      // A real revocation: the next page confirms it, the one after does not.
      const revoked = await browser.post(`/account/apps/${client.id}/revoke`, {
        csrf_token: FormBrowser.hidden(linked, 'csrf_token'),
      });
      assert.equal(revoked.status, 303);
      assert.equal(revoked.headers.location, '/account/apps');
      const confirmed = await browser.get('/account/apps');
      assert.match(confirmed.text, /Access for <strong>Notes App<\/strong> was revoked\./);
      assert.doesNotMatch((await browser.get('/account/apps')).text, NOTICE);
    });
  });
}
