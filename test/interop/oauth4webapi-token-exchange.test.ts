import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import * as oauth from 'oauth4webapi';
import { TOKEN_EXCHANGE_GRANT } from '../../src/core/model.js';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { trustingFetch } from '../helpers/trusting-fetch.js';
import { freePort } from '../ops/support/spawned-server.js';

// oauth4webapi (panva) as the client of an RFC 8693 token exchange: discovery (the grant type in
// grant_types_supported), genericTokenEndpointRequest with the token-exchange grant, the subject and
// actor tokens, and processGenericTokenEndpointResponse, which checks the response's members; and an
// error reaching the library as the RFC 6749 §5.2 error it is.

const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
const NEXT = 'https://next.example';

for (const backend of backends()) {
  describe(`interop: oauth4webapi exchanges tokens (${backend})`, () => {
    let server: TestServer;
    let issuer: URL;
    let https: ReturnType<typeof trustingFetch>;
    let as: oauth.AuthorizationServer;
    const options = () => ({ [oauth.customFetch]: https.fetch });

    before(async () => {
      // The library requires the metadata's issuer to be the URL it was fetched from (RFC 8414 §3.3).
      const port = await freePort();
      issuer = new URL(`https://localhost:${port}`);
      server = await startTestServer(backend, { port, issuer: issuer.origin });
      https = trustingFetch(server.ca);
      await server.gatehouse.engine.resources.create({ uri: NEXT, scopes: ['read'] });
      as = await oauth.processDiscoveryResponse(
        issuer,
        await oauth.discoveryRequest(issuer, { ...options(), algorithm: 'oauth2' }),
      );
    });
    after(async () => {
      https?.close();
      await server?.close();
    });

    it('genericTokenEndpointRequest with a subject and an actor token', async () => {
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

      const service = await server.client({ grant_types: [TOKEN_EXCHANGE_GRANT], scopes: ['read'] });
      const client: oauth.Client = { client_id: service.client.id };
      const exchanged = await oauth.processGenericTokenEndpointResponse(
        as,
        client,
        await oauth.genericTokenEndpointRequest(
          as,
          client,
          oauth.ClientSecretBasic(service.secret),
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
      const service = await server.client({ grant_types: [TOKEN_EXCHANGE_GRANT], scopes: ['read'] });
      const client: oauth.Client = { client_id: service.client.id };
      const response = await oauth.genericTokenEndpointRequest(
        as,
        client,
        oauth.ClientSecretBasic(service.secret),
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
