import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import * as oauth from 'oauth4webapi';
import { TOKEN_EXCHANGE_GRANT } from '../../src/core/model.js';
import { backends } from '../helpers/backends.js';
import { registerLibraryClient, startLibraryServer, type LibraryServer } from '../helpers/oauth4webapi.js';

// oauth4webapi (panva) as the client of an RFC 8693 token exchange: discovery (the grant type in
// grant_types_supported), genericTokenEndpointRequest with the token-exchange grant, the subject and
// actor tokens, and processGenericTokenEndpointResponse, which checks the response's members; and an
// error reaching the library as the RFC 6749 §5.2 error it is.

const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
const NEXT = 'https://next.example';

for (const backend of backends()) {
  describe(`interop: oauth4webapi exchanges tokens (${backend})`, () => {
    let lib: LibraryServer;

    before(async () => {
      lib = await startLibraryServer(backend, { algorithm: 'oauth2' });
      await lib.server.gatehouse.engine.resources.create({ uri: NEXT, scopes: ['read'] });
    });
    after(async () => {
      await lib?.close();
    });

    it('genericTokenEndpointRequest with a subject and an actor token', async () => {
      const { server, as, options } = lib;
      assert.ok(as.grant_types_supported?.includes(TOKEN_EXCHANGE_GRANT));
      const app = await server.client({ redirect_uris: ['https://app.example/cb'], scopes: ['read'] });
      const { user } = await server.user();
      const { code } = await server.seedCode({ client: app.client, user, scope: ['read'] });
      // The user's token comes from the code grant (redeemed directly: the library insists on a
      // callback it validated itself); the exchange is what is under test.
      const redeemed = await server.http.token(
        { grant_type: 'authorization_code', code, redirect_uri: 'https://app.example/cb' },
        { id: app.client.id, secret: app.secret },
      );
      assert.equal(redeemed.status, 200, redeemed.text);
      const subject = redeemed.json as { access_token: string };

      const { client, authentication } = await registerLibraryClient(server, {
        grant_types: [TOKEN_EXCHANGE_GRANT],
        scopes: ['read'],
        token_exchange_targets: [NEXT],
      });
      const exchanged = await oauth.processGenericTokenEndpointResponse(
        as,
        client,
        await oauth.genericTokenEndpointRequest(
          as,
          client,
          authentication,
          TOKEN_EXCHANGE_GRANT,
          {
            subject_token: subject.access_token,
            subject_token_type: ACCESS_TOKEN_TYPE,
            actor_token: subject.access_token,
            actor_token_type: ACCESS_TOKEN_TYPE,
            resource: NEXT,
          },
          options(),
        ),
      );
      assert.equal(exchanged.token_type.toLowerCase(), 'bearer');
      assert.equal(exchanged.issued_token_type, ACCESS_TOKEN_TYPE);
      assert.equal(exchanged.refresh_token, undefined);
      const claims = decodeJwt(exchanged.access_token);
      assert.equal(claims.aud, NEXT);
      assert.equal(claims.sub, user.id);
      assert.deepEqual(claims.act, { sub: user.id, client_id: app.client.id });
    });

    it('an invalid subject token reaches the library as invalid_request', async () => {
      const { server, as, options } = lib;
      const { client, authentication } = await registerLibraryClient(server, {
        grant_types: [TOKEN_EXCHANGE_GRANT],
        scopes: ['read'],
      });
      const response = await oauth.genericTokenEndpointRequest(
        as,
        client,
        authentication,
        TOKEN_EXCHANGE_GRANT,
        { subject_token: 'not.a.token', subject_token_type: ACCESS_TOKEN_TYPE },
        options(),
      );
      await assert.rejects(
        oauth.processGenericTokenEndpointResponse(as, client, response),
        (error: unknown) => {
          assert.ok(error instanceof oauth.ResponseBodyError);
          assert.equal(error.error, 'invalid_request');
          assert.equal(error.status, 400);
          return true;
        },
      );
    });
  });
}
