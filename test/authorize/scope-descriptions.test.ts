import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { FormBrowser } from '../helpers/form-browser.js';

/** The text of every permission's label on a consent page, tags removed. */
function permissionLabels(page: string): string[] {
  return [...page.matchAll(/<label for="scope-\d+"\s*>([\s\S]*?)<\/label\s*>/g)].map((match) =>
    (match[1] ?? '')
      .replace(/<[^>]+>/g, ' ')
      .replace(/\s+/g, ' ')
      .trim(),
  );
}

for (const backend of backends()) {
  describe(`descriptions of scopes created on the fly (${backend})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(backend);
    });
    after(async () => {
      await server.close();
    });

    it('are readable, and the consent page names no scope twice', async () => {
      const { client } = await server.client({
        name: 'Notes App',
        redirect_uris: ['https://notes.example/cb'],
        scopes: ['notes.read', 'legacy', 'profile'],
      });
      assert.equal((await server.store.storage.scopes.get('notes.read'))?.description, 'Access “notes.read”');
      // A scope stored before, with its name as its description.
      await server.store.storage.scopes.upsert({ name: 'legacy', description: 'legacy', createdAt: 0 });

      const { user, password } = await server.user();
      const browser = new FormBrowser(server);
      const path = `/authorize?${new URLSearchParams({
        response_type: 'code',
        client_id: client.id,
        scope: 'notes.read legacy profile',
      }).toString()}`;
      await browser.signIn(user.username, password, path);
      const consent = await browser.get(path);
      assert.equal(consent.status, 200);
      const profile = (await server.store.storage.scopes.get('profile'))?.description ?? '';
      assert.deepEqual(permissionLabels(consent.text), [
        'Access “notes.read”',
        'legacy',
        `${profile} profile`,
      ]);
    });
  });
}
