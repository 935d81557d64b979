import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  clientCredentialsToken,
  expectStatus,
  introspection,
  revoke,
  userToken,
} from '../helpers/api-requests.js';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

for (const backend of backends()) {
  describe(`POST /revoke answers a foreign token like an unknown one (${backend})`, () => {
    let server: TestServer;
    let observer: { id: string; secret: string };
    before(async () => {
      server = await startTestServer(backend, { purgeIntervalSeconds: 0 });
      const { client, secret } = await server.client({ name: 'observer', scopes: [] });
      observer = { id: client.id, secret };
    });
    after(async () => {
      await server.close();
    });

    it("answers another client's valid tokens exactly like unknown ones, and revokes nothing", async () => {
      const owner = await userToken(server, ['profile']);
      const other = await clientCredentialsToken(server, ['read']);
      const unknown = await revoke(server, other.credentials, { token: 'rt_nothing' });
      expectStatus(unknown, 200);
      for (const token of [owner.token.access_token, owner.token.refresh_token as string]) {
        for (const hint of [undefined, 'access_token', 'refresh_token']) {
          const res = await revoke(server, other.credentials, {
            token,
            ...(hint === undefined ? {} : { token_type_hint: hint }),
          });
          // RFC 7009 §2.2: the same answer as for an unknown token, byte for byte.
          assert.equal(res.status, unknown.status);
          assert.equal(res.text, unknown.text);
          assert.equal(res.headers['cache-control'], unknown.headers['cache-control']);
          assert.equal((await introspection(server, observer, token)).active, true, 'not revoked');
        }
      }
      // The owner can still revoke them.
      expectStatus(
        await revoke(server, owner.credentials, { token: owner.token.refresh_token as string }),
        200,
      );
      assert.equal((await introspection(server, observer, owner.token.access_token)).active, false);
    });
  });
}
