import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { exportJWK, generateKeyPair } from 'jose';
import * as oauth from 'oauth4webapi';
import { backends } from '../helpers/backends.js';
import { startKeyServer, type KeyServer } from '../helpers/key-server.js';
import { registerLibraryClient, startLibraryServer, type LibraryServer } from '../helpers/oauth4webapi.js';

// oauth4webapi (panva) as the client, with its own private_key_jwt (RFC 7523) client authentication
// against Gatehouse's published metadata: discovery, the client_credentials grant, introspection and
// revocation, each request authenticated by an assertion the library makes and signs itself. Its
// keys are registered both ways: inline, and at a jwks_uri on an HTTPS server.

for (const backend of backends()) {
  describe(`interop: oauth4webapi PrivateKeyJwt (${backend})`, () => {
    let lib: LibraryServer;
    let keys: KeyServer;
    before(async () => {
      keys = await startKeyServer();
      lib = await startLibraryServer(backend, {
        config: { allowPrivateJwksUri: true },
        gatehouse: { outboundCa: keys.ca },
      });
    });
    after(async () => {
      await lib?.close();
      await keys?.close();
    });

    it('the metadata names private_key_jwt and the algorithms the library may sign with', () => {
      const { as } = lib;
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
        const { as } = lib;
        const {
          registered,
          client,
          authentication: auth,
        } = await registerLibraryClient(
          lib.server,
          {
            name: `oauth4webapi ${where}`,
            grant_types: ['client_credentials'],
            scopes: ['read'],
            token_endpoint_auth_method: 'private_key_jwt',
            ...(where === 'jwks' ? { jwks: { keys: [publicJwk] } } : { jwks_uri: keys.url(`/${kid}`) }),
          },
          oauth.PrivateKeyJwt({ key: privateKey, kid }),
        );
        const options = lib.options();

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
