import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { deriveMacKey } from '../../src/core/keys/mac.js';
import type { Client } from '../../src/core/model.js';
import type { TokenEndpointRequest } from '../../src/core/token-endpoint/token-endpoint.js';
import type { TokenResponse } from '../../src/core/tokens/token-issuer.js';
import { deriveKey } from '../../src/shared/crypto.js';
import {
  addClient,
  basic,
  expectOAuthError,
  liveClaims,
  type ExpectedError,
} from '../helpers/fakes/fixtures.js';
import { START, testEngine, type TestEngine } from '../helpers/fakes/test-engine.js';

interface Row {
  name: string;
  /** The registration of the client making the request. */
  client?: Partial<Client>;
  /** The request; by default the client with HTTP Basic and these form parameters. */
  params: Record<string, string | undefined>;
  auth?: (client: Client, secret: string) => Pick<TokenEndpointRequest, 'authorization'>;
  expected: ExpectedError | ((engine: TestEngine, client: Client, response: TokenResponse) => Promise<void>);
}

/** The dispatch rules of POST /token (RFC 6749 §3.2, §5.2): which grant runs, and for whom. */
const DISPATCH: Row[] = [
  {
    name: 'grant_type missing',
    params: { scope: 'read' },
    expected: { code: 'invalid_request', status: 400, description: 'grant_type is required' },
  },
  {
    name: 'grant_type empty',
    params: { grant_type: '' },
    expected: { code: 'invalid_request', status: 400, description: 'grant_type is required' },
  },
  ...['magic', 'implicit', 'urn:ietf:params:oauth:grant-type:saml2-bearer'].map((grantType) => ({
    name: `an unsupported grant_type: ${grantType}`,
    params: { grant_type: grantType },
    expected: {
      code: 'unsupported_grant_type' as const,
      status: 400,
      description: `grant_type not supported: ${grantType}`,
    },
  })),
  {
    name: 'the client is authenticated before the grant type is looked at',
    params: { grant_type: 'magic' },
    auth: (client) => ({ authorization: basic(client.id, 'wrong') }),
    expected: { code: 'invalid_client', status: 401 },
  },
  {
    name: 'a grant type the client is not registered for',
    client: { grantTypes: ['authorization_code'] },
    params: { grant_type: 'password', username: 'alice', password: 'whatever' },
    expected: {
      code: 'unauthorized_client',
      status: 400,
      description: 'this client may not use the password grant',
    },
  },
  {
    name: 'a public client registered for client_credentials behind the registry’s back (RFC 6749 §4.4)',
    client: { isPublic: true, grantTypes: ['client_credentials'] },
    params: { grant_type: 'client_credentials' },
    auth: () => ({ authorization: undefined }),
    expected: {
      code: 'unauthorized_client',
      status: 400,
      description: 'public clients may not use the client_credentials grant',
    },
  },
];

/** RFC 6749 §4.4: the client acts for itself. */
const CLIENT_CREDENTIALS: Row[] = [
  {
    name: 'an access token for the client itself, with every registered scope, and no refresh token (§4.4.3)',
    params: { grant_type: 'client_credentials' },
    async expected(engine, client, response) {
      assert.equal(response.token_type, 'bearer');
      assert.equal(response.expires_in, 3600);
      assert.equal(response.scope, 'read write');
      assert.equal(response.refresh_token, undefined);
      const claims = await liveClaims(engine, response.access_token);
      assert.equal(claims.sub, client.id);
      assert.equal(claims.client_id, client.id);
      assert.equal(claims.gid, undefined, 'no grant: nobody but the client consented');
      assert.equal(claims.exp, START + 3600);
    },
  },
  {
    name: 'a narrower scope on request',
    params: { grant_type: 'client_credentials', scope: 'read' },
    expected: async (_e, _c, response) => assert.equal(response.scope, 'read'),
  },
  {
    name: 'a scope the client is not registered for',
    params: { grant_type: 'client_credentials', scope: 'read admin' },
    expected: { code: 'invalid_scope', status: 400, description: 'scope not allowed for this client: admin' },
  },
  {
    name: 'no scope member for a client with no scopes',
    client: { scopes: [] },
    params: { grant_type: 'client_credentials' },
    expected: async (_e, _c, response) => assert.equal(response.scope, undefined),
  },
  {
    name: 'a MAC client gets token_type mac with its key (docs/decisions.md, decision 3)',
    client: { tokenType: 'mac' },
    params: { grant_type: 'client_credentials' },
    async expected(engine, _client, response) {
      assert.equal(response.token_type, 'mac');
      assert.equal(response.mac_algorithm, 'hmac-sha-256');
      const claims = await liveClaims(engine, response.access_token);
      assert.equal(claims.token_type, 'mac');
      // Derived from the server secret and the token id: nothing stored.
      assert.equal(
        response.mac_key,
        deriveMacKey(deriveKey(engine.config.secret, 'mac-keys'), String(claims.jti)),
      );
    },
  },
  {
    name: 'a bearer client gets no MAC fields',
    params: { grant_type: 'client_credentials' },
    async expected(_engine, _client, response) {
      assert.equal(response.mac_key, undefined);
      assert.equal(response.mac_algorithm, undefined);
    },
  },
  {
    name: 'wrong client credentials',
    params: { grant_type: 'client_credentials' },
    auth: (client) => ({ authorization: basic(client.id, 'wrong') }),
    expected: { code: 'invalid_client', status: 401, description: 'unknown client or wrong credentials' },
  },
  {
    name: 'a client not registered for client_credentials',
    client: { grantTypes: ['password'] },
    params: { grant_type: 'client_credentials' },
    expected: {
      code: 'unauthorized_client',
      status: 400,
      description: 'this client may not use the client_credentials grant',
    },
  },
  {
    name: 'a public client, which has no secret to authenticate with',
    client: { isPublic: true, grantTypes: ['authorization_code'] },
    params: { grant_type: 'client_credentials' },
    auth: () => ({ authorization: undefined }),
    expected: { code: 'unauthorized_client', status: 400 },
  },
];

function table(rows: Row[]) {
  for (const row of rows) {
    it(row.name, async () => {
      const engine = await testEngine();
      try {
        const { client, secret } = await addClient(engine, {
          grantTypes: ['client_credentials'],
          scopes: ['read', 'write'],
          ...row.client,
        });
        const auth = row.auth?.(client, secret) ?? { authorization: basic(client.id, secret) };
        // A client without Basic names itself in the form, as a public client does.
        const params =
          auth.authorization === undefined ? { client_id: client.id, ...row.params } : row.params;
        const request = engine.token({ ...auth, params });
        if (typeof row.expected === 'function') await row.expected(engine, client, await request);
        else await expectOAuthError(request, row.expected);
      } finally {
        await engine.close();
      }
    });
  }
}

describe('token endpoint dispatch (RFC 6749 §3.2, §5.2)', () => {
  table(DISPATCH);

  it('serves exactly the five token grants and RFC 8628’s device grant', async () => {
    const engine = await testEngine();
    assert.deepEqual(engine.tokenEndpoint.grantTypes.sort(), [
      'authorization_code',
      'client_credentials',
      'password',
      'refresh_token',
      'urn:ietf:params:oauth:grant-type:device_code',
      'urn:ietf:params:oauth:grant-type:token-exchange',
    ]);
    await engine.close();
  });
});

describe('client_credentials grant (RFC 6749 §4.4)', () => {
  table(CLIENT_CREDENTIALS);
});
