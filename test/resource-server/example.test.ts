import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createNotesService } from '../../examples/notes-service.js';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { clientCredentialsToken } from '../helpers/api-requests.js';
import { listen, optionsFor, plainRequest } from '../helpers/resource-server-requests.js';

for (const backend of backends()) {
  describe(`examples/notes-service against a running Gatehouse (${backend})`, () => {
    let gatehouse: TestServer;
    let notes: ReturnType<typeof createNotesService>;
    let url: string;
    before(async () => {
      gatehouse = await startTestServer(backend, {}, { transport: 'https' });
      const { client, secret } = await gatehouse.client({ name: 'notes service', scopes: [] });
      notes = createNotesService({
        resourceServer: optionsFor(gatehouse, {
          introspection: { clientId: client.id, clientSecret: secret },
        }),
      });
      url = await listen(notes.server);
    });
    after(async () => {
      notes.close();
      await gatehouse.close();
    });

    it('keeps notes per token subject, guarded by notes:read and notes:write', async () => {
      const { client, token } = await clientCredentialsToken(gatehouse, ['notes:read', 'notes:write']);
      const headers = { authorization: `Bearer ${token.access_token}`, 'content-type': 'application/json' };
      const created = await plainRequest(url, '/notes', {
        method: 'POST',
        headers,
        body: JSON.stringify({ text: 'buy milk' }),
      });
      assert.equal(created.status, 201, created.text);
      const listed = await plainRequest(url, '/notes', { headers });
      assert.equal(listed.status, 200);
      assert.deepEqual(listed.json, { owner: client.id, notes: ['buy milk'] });

      const reader = await clientCredentialsToken(gatehouse, ['notes:read']);
      const refused = await plainRequest(url, '/notes', {
        method: 'POST',
        headers: { authorization: `Bearer ${reader.token.access_token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ text: 'nope' }),
      });
      assert.equal(refused.status, 403);
      const anonymous = await plainRequest(url, '/notes');
      assert.equal(anonymous.status, 401);
      assert.equal(anonymous.headers['www-authenticate'], 'Bearer realm="notes"');
      assert.equal((await plainRequest(url, '/health')).status, 200);
    });
  });
}
