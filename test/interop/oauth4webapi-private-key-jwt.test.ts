import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { exportJWK, generateKeyPair } from 'jose';
import * as oauth from 'oauth4webapi';
import type { Client } from '../../src/core/model.js';
import { backends } from '../helpers/backends.js';
import { startKeyServer, type KeyServer } from '../helpers/key-server.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { trustingFetch } from '../helpers/trusting-fetch.js';
import { freePort } from '../ops/support/spawned-server.js';

// oauth4webapi (panva) as the client, with its own private_key_jwt (RFC 7523) client authentication
// against Gatehouse's published metadata: discovery, the client_credentials grant, introspection and
// revocation, each request authenticated by an assertion the library makes and signs itself. Its
// keys are registered both ways: inline, and at a jwks_uri on an HTTPS server.

for (const backend of backends()) {
  describe(`interop: oauth4webapi PrivateKeyJwt (${backend})`, () => {
    let server: TestServer;
    let keys: KeyServer;
    let https: ReturnType<typeof trustingFetch>;
    let as: oauth.AuthorizationServer;
    before(async () => {
      keys = await startKeyServer();
      // The library requires the metadata's issuer to be the URL it was fetched from (RFC 8414 §3.3).
      const port = await freePort();
      const issuer = `https://localhost:${port}`;
      server = await startTestServer(
        backend,
        { port, issuer, allowPrivateJwksUri: true },
        { outboundCa: keys.ca },
      );
      https = trustingFetch(server.ca);
      const options = { [oauth.customFetch]: https.fetch as typeof fetch };
      as = await oauth.processDiscoveryResponse(
        new URL(issuer),
        await oauth.discoveryRequest(new URL(issuer), options),
      );
    });
    after(async () => {
      https?.close();
      await server?.close();
      await keys?.close();
    });

    it('the metadata names private_key_jwt and the algorithms the library may sign with', () => {
      assert.ok(as.token_endpoint_auth_methods_supported?.includes('private_key_jwt'));
      assert.ok(as.token_endpoint_auth_signing_alg_values_supported?.includes('ES256'));
      assert.ok(as.introspection_endpoint_auth_methods_supported?.includes('private_key_jwt'));
      assert.ok(as.revocation_endpoint_auth_methods_supported?.includes('private_key_jwt'));
    });

    for (const where of ['jwks', 'jwks_uri'] as const) {
      it(`client_credentials, introspection and revocation with keys registered as ${where}`, async () => {
        const { privateKey, publicKey } = await generateKeyPair('ES256');
        const kid = `oauth4webapi-${where}`;
        const publicJwk = { ...(await exportJWK(publicKey)), kid };
        if (where === 'jwks_uri') keys.answers.set(`/${kid}`, { json: { keys: [publicJwk] } });
        const registered: Client = (
          await server.client({
            name: `oauth4webapi ${where}`,
            grant_types: ['client_credentials'],
            scopes: ['read'],
            token_endpoint_auth_method: 'private_key_jwt',
            ...(where === 'jwks' ? { jwks: { keys: [publicJwk] } } : { jwks_uri: keys.url(`/${kid}`) }),
          })
        ).client;
        const client: oauth.Client = { client_id: registered.id };
        const auth = oauth.PrivateKeyJwt({ key: privateKey, kid });
        const options = { [oauth.customFetch]: https.fetch as typeof fetch };

        const tokens = await oauth.processClientCredentialsResponse(
          as,
          client,
          await oauth.clientCredentialsGrantRequest(as, client, auth, { scope: 'read' }, options),
        );
        assert.equal(tokens.token_type, 'bearer');
        assert.equal(tokens.scope, 'read');

        const introspect = async () =>
          oauth.processIntrospectionResponse(
            as,
            client,
            await oauth.introspectionRequest(as, client, auth, tokens.access_token, options),
          );
        const live = await introspect();
        assert.equal(live.active, true);
        assert.equal(live.client_id, registered.id);

        await oauth.processRevocationResponse(
          await oauth.revocationRequest(as, client, auth, tokens.access_token, options),
        );
        assert.equal((await introspect()).active, false);
      });
    }
  });
}
