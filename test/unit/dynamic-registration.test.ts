import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mayReuseConsent } from '../../src/core/authorize/authorization-service.js';
import type { AuthorizationRequest } from '../../src/core/authorize/request.js';
import {
  RegistrationAuthError,
  type ClientInformation,
  type RegistrationPolicy,
} from '../../src/core/clients/dynamic-registration.js';
import { OAuthError } from '../../src/core/errors.js';
import { DEVICE_CODE_GRANT_TYPE, type Client } from '../../src/core/model.js';
import { sha256 } from '../../src/shared/crypto.js';
import { ValidationError } from '../../src/core/validation.js';
import { addClient, addUser } from '../helpers/fakes/fixtures.js';
import { ISSUER, testEngine, type TestEngine } from '../helpers/fakes/test-engine.js';

const CALLBACK = 'https://app.example/cb';
/** The scopes open registration allows unless configured otherwise. */
const OPEN_SCOPES = ['openid', 'profile', 'email', 'offline_access'];

type Expected =
  /** Refused as RFC 7591 §3.2.2 says, nothing stored. */
  | { error: 'invalid_redirect_uri' | 'invalid_client_metadata'; description?: RegExp }
  /** Refused as RFC 6750 §3.1 says (401, Bearer); `code` undefined when no token came. */
  | { unauthorized: 'invalid_token' | undefined }
  /** Registered: these members of the client information response, and the client stored so. */
  | { registered: Partial<ClientInformation>; registration: 'open' | 'token'; isPublic: boolean };

interface Row {
  name: string;
  metadata: unknown;
  policy?: RegistrationPolicy;
  /** Which initial access token the request carries. */
  token?: 'valid' | 'scoped' | 'expired' | 'unknown';
  expected: Expected;
}

const minimal = { redirect_uris: [CALLBACK] };
const DEVICE = DEVICE_CODE_GRANT_TYPE;

const ROWS: Row[] = [
  // The metadata's shape
  {
    name: 'a body that is not an object',
    metadata: [CALLBACK],
    expected: { error: 'invalid_client_metadata', description: /JSON object/ },
  },
  {
    name: 'no redirect_uris (RFC 7591 §2: required for the code flow)',
    metadata: { client_name: 'App' },
    expected: { error: 'invalid_redirect_uri', description: /redirect_uris is required/ },
  },
  {
    name: 'an empty redirect_uris',
    metadata: { redirect_uris: [] },
    expected: { error: 'invalid_redirect_uri' },
  },
  {
    name: 'redirect_uris not an array of strings',
    metadata: { redirect_uris: CALLBACK },
    expected: { error: 'invalid_redirect_uri', description: /array of strings/ },
  },
  {
    name: 'more redirect URIs than /v1/clients takes',
    metadata: { redirect_uris: Array.from({ length: 51 }, (_, i) => `${CALLBACK}${i}`) },
    expected: { error: 'invalid_redirect_uri', description: /at most 50/ },
  },
  // The redirect URI rules of `clients create` (core/clients/redirect-uri.ts)
  ...[
    ['http on a host that is not loopback', 'http://app.example/cb', /https/],
    ['a fragment', `${CALLBACK}#x`, /fragment/],
    ['user information', 'https://user@app.example/cb', /user information/],
    ['a backslash', 'https://evil.example\\@app.example/cb', /backslash/],
    ['a javascript: URI', 'javascript:alert(1)', /forbidden scheme/],
    ['a relative URI', '/cb', /absolute/],
  ].map(([what, uri, description]): Row => ({
    name: `a redirect URI with ${String(what)}`,
    metadata: { redirect_uris: [uri] },
    expected: { error: 'invalid_redirect_uri', description: description as RegExp },
  })),
  {
    name: 'a post-logout redirect URI held to the same rules, answered as client metadata',
    metadata: { ...minimal, post_logout_redirect_uris: ['http://app.example/bye'] },
    expected: { error: 'invalid_client_metadata', description: /^post_logout_redirect_uris/ },
  },
  // Grant and response types: the code flow and the device grant only
  ...['password', 'client_credentials', 'implicit', 'urn:ietf:params:oauth:grant-type:jwt-bearer'].map(
    (grantType): Row => ({
      name: `grant type ${grantType} is never open`,
      metadata: { ...minimal, grant_types: ['authorization_code', grantType] },
      expected: { error: 'invalid_client_metadata', description: new RegExp(`"${grantType}"`) },
    }),
  ),
  ...['token', 'id_token', 'code id_token', 'none'].map((responseType): Row => ({
    name: `response type ${responseType} is never open`,
    metadata: { ...minimal, response_types: [responseType] },
    expected: { error: 'invalid_client_metadata', description: /response type/ },
  })),
  {
    name: 'response type code without the grant type authorization_code (RFC 7591 §2.1)',
    metadata: { ...minimal, grant_types: ['refresh_token'], response_types: ['code'] },
    expected: { error: 'invalid_client_metadata', description: /disagree/ },
  },
  {
    name: 'the grant type authorization_code without the response type code (RFC 7591 §2.1)',
    metadata: { ...minimal, grant_types: ['authorization_code'], response_types: [] },
    expected: { error: 'invalid_client_metadata', description: /disagree/ },
  },
  {
    name: 'refresh_token alone, with no response type: nothing to refresh',
    metadata: { ...minimal, grant_types: ['refresh_token'], response_types: [] },
    expected: { error: 'invalid_client_metadata', description: /must include authorization_code/ },
  },
  {
    name: 'the device grant with the response type code but not authorization_code (RFC 7591 §2.1)',
    metadata: { grant_types: [DEVICE], response_types: ['code'] },
    expected: { error: 'invalid_client_metadata', description: /disagree/ },
  },
  {
    name: 'the device grant beside the code flow: the code flow still needs its redirect URI',
    metadata: { grant_types: ['authorization_code', DEVICE] },
    expected: { error: 'invalid_redirect_uri', description: /redirect_uris is required/ },
  },
  {
    name: 'a device client held to the open scopes like any other',
    metadata: { grant_types: [DEVICE], scope: 'openid admin' },
    expected: { error: 'invalid_client_metadata', description: /"admin" is not open/ },
  },
  {
    name: 'grant_types not an array',
    metadata: { ...minimal, grant_types: 'authorization_code' },
    expected: { error: 'invalid_client_metadata', description: /array of strings/ },
  },
  // Client authentication
  ...['client_secret_jwt', 'tls_client_auth', 'magic'].map((method): Row => ({
    name: `token_endpoint_auth_method ${method} is not supported`,
    metadata: { ...minimal, token_endpoint_auth_method: method },
    expected: { error: 'invalid_client_metadata', description: /not supported/ },
  })),
  // Scopes
  {
    name: 'admin is never open',
    metadata: { ...minimal, scope: 'openid admin' },
    expected: { error: 'invalid_client_metadata', description: /"admin" is not open/ },
  },
  {
    name: 'a scope outside the open list',
    metadata: { ...minimal, scope: 'payments' },
    expected: { error: 'invalid_client_metadata', description: /"payments"/ },
  },
  {
    name: 'scope not a string',
    metadata: { ...minimal, scope: ['openid'] },
    expected: { error: 'invalid_client_metadata', description: /scope must be a string/ },
  },
  // Names and algorithms: the rules of `clients create`
  {
    name: 'a client name with a right-to-left override',
    metadata: { ...minimal, client_name: 'Good\u202eApp' },
    expected: { error: 'invalid_client_metadata', description: /^client_name/ },
  },
  {
    name: 'a client name too long',
    metadata: { ...minimal, client_name: 'x'.repeat(201) },
    expected: { error: 'invalid_client_metadata', description: /^client_name/ },
  },
  {
    name: 'an ID token algorithm Gatehouse does not sign with',
    metadata: { ...minimal, id_token_signed_response_alg: 'none' },
    expected: { error: 'invalid_client_metadata', description: /^id_token_signed_response_alg/ },
  },
  // What is registered
  {
    name: 'the least metadata: RFC 7591 §2 defaults, a confidential client, every open scope',
    metadata: minimal,
    expected: {
      registration: 'open',
      isPublic: false,
      registered: {
        client_name: 'app.example',
        redirect_uris: [CALLBACK],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
        client_secret_expires_at: 0,
        scope: OPEN_SCOPES.join(' '),
        id_token_signed_response_alg: 'RS256',
        require_pushed_authorization_requests: false,
      },
    },
  },
  {
    name: 'a public native client with PKCE (auth method none), refresh tokens, a narrower scope',
    metadata: {
      client_name: 'Desktop App',
      redirect_uris: ['http://127.0.0.1:8123/cb', 'com.example.desktop:/cb'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      scope: 'openid offline_access',
    },
    expected: {
      registration: 'open',
      isPublic: true,
      registered: {
        client_name: 'Desktop App',
        redirect_uris: ['http://127.0.0.1:8123/cb', 'com.example.desktop:/cb'],
        grant_types: ['authorization_code', 'refresh_token'],
        token_endpoint_auth_method: 'none',
        scope: 'openid offline_access',
      },
    },
  },
  {
    name: 'a public device client (RFC 8628): no redirect URI, no response type, named without one',
    metadata: { grant_types: [DEVICE, 'refresh_token'], token_endpoint_auth_method: 'none', scope: 'openid' },
    expected: {
      registration: 'open',
      isPublic: true,
      registered: {
        client_name: 'Unnamed application',
        redirect_uris: [],
        grant_types: [DEVICE, 'refresh_token'],
        response_types: [],
        token_endpoint_auth_method: 'none',
        scope: 'openid',
      },
    },
  },
  {
    name: 'a confidential client of the code flow and the device grant',
    metadata: { ...minimal, client_name: 'TV and web', grant_types: ['authorization_code', DEVICE] },
    expected: {
      registration: 'open',
      isPublic: false,
      registered: {
        client_name: 'TV and web',
        redirect_uris: [CALLBACK],
        grant_types: ['authorization_code', DEVICE],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    },
  },
  {
    name: 'client_secret_post: a confidential client, registered as it asked (it may use either secret method)',
    metadata: { ...minimal, token_endpoint_auth_method: 'client_secret_post', scope: '' },
    expected: {
      registration: 'open',
      isPublic: false,
      registered: { token_endpoint_auth_method: 'client_secret_post', scope: '' },
    },
  },
  {
    name: 'unknown members and ones Gatehouse does not use are ignored (RFC 7591 §2)',
    metadata: {
      ...minimal,
      client_uri: 'https://app.example',
      logo_uri: 'https://app.example/logo.png',
      contacts: ['ops@app.example'],
      software_statement: 'eyJ...',
      token_type: 'mac',
      client_id: 'chosen-by-me',
      client_secret: 'chosen-by-me',
      'client_name#fr': 'Appli',
    },
    expected: { registration: 'open', isPublic: false, registered: { client_name: 'app.example' } },
  },
  {
    name: 'post_logout_redirect_uris and ES256 ID tokens',
    metadata: {
      ...minimal,
      post_logout_redirect_uris: ['https://app.example/bye'],
      id_token_signed_response_alg: 'ES256',
    },
    expected: {
      registration: 'open',
      isPublic: false,
      registered: {
        post_logout_redirect_uris: ['https://app.example/bye'],
        id_token_signed_response_alg: 'ES256',
      },
    },
  },
  {
    name: 'require_pushed_authorization_requests (RFC 9126 §6) is registered',
    metadata: { ...minimal, require_pushed_authorization_requests: true },
    expected: {
      registration: 'open',
      isPublic: false,
      registered: { require_pushed_authorization_requests: true },
    },
  },
  {
    name: 'require_pushed_authorization_requests must be a boolean',
    metadata: { ...minimal, require_pushed_authorization_requests: 'yes' },
    expected: { error: 'invalid_client_metadata', description: /true or false/ },
  },
  {
    name: 'dpop_bound_access_tokens (RFC 9449 §5.2) is registered',
    metadata: { ...minimal, dpop_bound_access_tokens: true },
    expected: {
      registration: 'open',
      isPublic: false,
      registered: { dpop_bound_access_tokens: true },
    },
  },
  {
    name: 'dpop_bound_access_tokens must be a boolean',
    metadata: { ...minimal, dpop_bound_access_tokens: 'yes' },
    expected: {
      error: 'invalid_client_metadata',
      description: /dpop_bound_access_tokens must be true or false/,
    },
  },
  {
    name: 'a private-use scheme names the client when client_name is absent',
    metadata: { redirect_uris: ['com.example.app:/cb'], token_endpoint_auth_method: 'none' },
    expected: { registration: 'open', isPublic: true, registered: { client_name: 'com.example.app' } },
  },
  // Names a self-registered client cannot take: the product's, and its lookalikes (UTS #39 skeletons)
  ...[
    ['the product name', 'Gatehouse'],
    ['the product name in capitals', 'GATEHOUSE'],
    ['a Cyrillic о (U+043E)', 'Gateh\u043euse'],
    ['a Greek ο (U+03BF) and a fullwidth ｅ', 'Gateh\u03bfus\uff45'],
    ['a combining acute accent', 'Gate\u0301house'],
    ['a combining grapheme joiner (default-ignorable)', 'Gate\u034fhouse'],
    ['the digit 0 for o', 'Gateh0use'],
    ['fullwidth letters', '\uff27\uff41\uff54\uff45\uff48\uff4f\uff55\uff53\uff45'],
    ['surrounding spaces', '  Gatehouse '],
  ].map(([what, name]): Row => ({
    name: `client_name: ${String(what)} is refused`,
    metadata: { ...minimal, client_name: name },
    expected: { error: 'invalid_client_metadata', description: /client_name is, or looks like/ },
  })),
  {
    name: 'client_name: another name is the client’s own',
    metadata: { ...minimal, client_name: 'Gatekeeper' },
    expected: { registration: 'open', isPublic: false, registered: { client_name: 'Gatekeeper' } },
  },
  // Redirect URIs on the issuer's own origin (its playground's callback among them)
  ...[
    ['the playground callback', `${ISSUER}/playground/callback`],
    ['the issuer in capitals', 'https://GATEHOUSE.test/cb'],
    ['the default port spelled out', 'https://gatehouse.test:443/cb'],
    ['the root’s trailing dot', 'https://gatehouse.test./cb'],
  ].map(([what, uri]): Row => ({
    name: `redirect_uris on the issuer’s origin: ${String(what)}`,
    metadata: { redirect_uris: [CALLBACK, uri] },
    expected: { error: 'invalid_redirect_uri', description: /redirect_uris must not be on the server/ },
  })),
  {
    name: 'post_logout_redirect_uris on the issuer’s origin',
    metadata: { ...minimal, post_logout_redirect_uris: [`${ISSUER}/logout`] },
    expected: {
      error: 'invalid_redirect_uri',
      description: /post_logout_redirect_uris must not be on the server/,
    },
  },
  {
    name: 'another origin of the same host (another port, a subdomain) is not the issuer’s',
    metadata: { redirect_uris: ['https://gatehouse.test:8443/cb', 'https://app.gatehouse.test/cb'] },
    expected: { registration: 'open', isPublic: false, registered: { client_name: 'gatehouse.test' } },
  },
  // A jwks_uri literally on a non-public address (decision 21), refused without any DNS lookup
  ...[
    'https://127.0.0.1/jwks',
    'https://[::1]/jwks',
    'https://localhost/jwks',
    'https://keys.localhost/jwks',
    'https://10.1.2.3/jwks',
    'https://169.254.169.254/latest/jwks',
    'https://[::ffff:192.168.0.1]/jwks',
    'https://2130706433/jwks',
  ].map((uri): Row => ({
    name: `jwks_uri on a non-public address: ${uri}`,
    metadata: { ...minimal, token_endpoint_auth_method: 'private_key_jwt', jwks_uri: uri },
    expected: { error: 'invalid_client_metadata', description: /jwks_uri must not name a loopback/ },
  })),
  // The policies and initial access tokens (RFC 7591 §3)
  {
    name: 'token policy: no initial access token',
    policy: 'token',
    metadata: minimal,
    expected: { unauthorized: undefined },
  },
  {
    name: 'token policy: an unknown initial access token',
    policy: 'token',
    token: 'unknown',
    metadata: minimal,
    expected: { unauthorized: 'invalid_token' },
  },
  {
    name: 'token policy: an expired initial access token',
    policy: 'token',
    token: 'expired',
    metadata: minimal,
    expected: { unauthorized: 'invalid_token' },
  },
  {
    name: 'token policy: a valid token registers a token client with the open scopes',
    policy: 'token',
    token: 'valid',
    metadata: minimal,
    expected: { registration: 'token', isPublic: false, registered: { scope: OPEN_SCOPES.join(' ') } },
  },
  {
    name: 'token policy: a token with scopes of its own gives those, not the open ones',
    policy: 'token',
    token: 'scoped',
    metadata: { ...minimal, scope: 'payments openid' },
    expected: { registration: 'token', isPublic: false, registered: { scope: 'payments openid' } },
  },
  {
    name: 'token policy: a scoped token limits to its own scopes',
    policy: 'token',
    token: 'scoped',
    metadata: { ...minimal, scope: 'email' },
    expected: { error: 'invalid_client_metadata', description: /"email" is not open/ },
  },
  {
    name: 'token policy: the grant type limits hold with a token too',
    policy: 'token',
    token: 'valid',
    metadata: { ...minimal, grant_types: ['client_credentials'] },
    expected: { error: 'invalid_client_metadata', description: /client_credentials/ },
  },
  {
    name: 'token policy: a device client, within its token’s scopes',
    policy: 'token',
    token: 'scoped',
    metadata: { grant_types: [DEVICE], token_endpoint_auth_method: 'none' },
    expected: {
      registration: 'token',
      isPublic: true,
      registered: { grant_types: [DEVICE], response_types: [], scope: 'payments openid' },
    },
  },
  {
    name: 'token policy: a device client asking beyond its token’s scopes',
    policy: 'token',
    token: 'scoped',
    metadata: { grant_types: [DEVICE], scope: 'email' },
    expected: { error: 'invalid_client_metadata', description: /"email" is not open/ },
  },
  {
    name: 'open policy: a valid token still makes it a token registration',
    token: 'scoped',
    metadata: { ...minimal, scope: 'payments' },
    expected: { registration: 'token', isPublic: false, registered: { scope: 'payments' } },
  },
  {
    name: 'open policy: an invalid token is refused, not ignored',
    token: 'unknown',
    metadata: minimal,
    expected: { unauthorized: 'invalid_token' },
  },
];

async function withEngine(policy: RegistrationPolicy, run: (t: TestEngine) => Promise<void>): Promise<void> {
  const engine = await testEngine({ dynamicRegistration: policy });
  try {
    await run(engine);
  } finally {
    await engine.close();
  }
}

/** The row's initial access token: made through the registry, as the CLI does. */
async function tokenFor(t: TestEngine, kind: Row['token']): Promise<string | undefined> {
  const registry = t.engine.initialAccessTokens;
  switch (kind) {
    case undefined:
      return undefined;
    case 'unknown':
      return 'iat_not-a-token-anyone-was-given';
    case 'valid':
      return (await registry.create({})).token;
    case 'scoped':
      return (await registry.create({ scopes: ['payments', 'openid'] })).token;
    case 'expired': {
      const { token } = await registry.create({ expiresIn: 60 });
      t.clock.advance(60);
      return token;
    }
  }
}

describe('dynamic client registration rules (RFC 7591)', () => {
  for (const row of ROWS) {
    it(row.name, async () => {
      await withEngine(row.policy ?? 'open', async (t) => {
        const token = await tokenFor(t, row.token);
        const before = (await t.storage.clients.list({ limit: 100, offset: 0 })).total;
        const attempt = t.engine.registration.register(row.metadata, token);
        const { expected } = row;
        if ('error' in expected) {
          await assert.rejects(attempt, (error: unknown) => {
            assert.ok(error instanceof OAuthError, String(error));
            assert.equal(error.code, expected.error);
            assert.equal(error.status, 400);
            if (expected.description) assert.match(error.description, expected.description);
            return true;
          });
        } else if ('unauthorized' in expected) {
          await assert.rejects(attempt, (error: unknown) => {
            assert.ok(error instanceof RegistrationAuthError, String(error));
            assert.equal(error.code, expected.unauthorized);
            return true;
          });
        }
        if (!('registered' in expected)) {
          assert.equal(
            (await t.storage.clients.list({ limit: 100, offset: 0 })).total,
            before,
            'nothing stored',
          );
          return;
        }
        const information = await attempt;
        for (const [member, value] of Object.entries(expected.registered)) {
          assert.deepEqual(information[member as keyof ClientInformation], value, member);
        }
        assert.equal(information.registration_client_uri, `${ISSUER}/register/${information.client_id}`);
        assert.equal(information.client_id_issued_at, t.clock.now());
        assert.match(information.registration_access_token ?? '', /^rat_[A-Za-z0-9_-]{43}$/);
        const stored = await t.storage.clients.get(information.client_id);
        assert.ok(stored);
        assert.equal(stored.registration, expected.registration);
        assert.equal(stored.isPublic, expected.isPublic);
        assert.equal(stored.tokenType, 'bearer');
        assert.equal(stored.firstGrantedAt, null);
        // Only hashes are kept (RFC 7592 §3 token, the client secret).
        assert.equal(stored.registrationAccessTokenHash, sha256(information.registration_access_token ?? ''));
        if (expected.isPublic) {
          assert.equal(information.client_secret, undefined);
          assert.equal(information.client_secret_expires_at, undefined);
          assert.equal(stored.secretHash, null);
        } else {
          assert.match(information.client_secret ?? '', /^cs_/);
          assert.equal(stored.secretHash, sha256(information.client_secret ?? ''));
        }
      });
    });
  }

  it('counts the clients each initial access token registered', async () => {
    await withEngine('token', async (t) => {
      const { token, view } = await t.engine.initialAccessTokens.create({});
      const other = await t.engine.initialAccessTokens.create({});
      await t.engine.registration.register(minimal, token);
      await t.engine.registration.register(minimal, token);
      await assert.rejects(t.engine.registration.register({}, token), OAuthError);
      const counts = new Map(
        (await t.engine.initialAccessTokens.list()).map((v) => [v.id, v.clients_registered]),
      );
      assert.equal(counts.get(view.id), 2, 'a refused registration does not count');
      assert.equal(counts.get(other.view.id), 0);
    });
  });

  it('a jwks_uri on a public name is registered (its addresses are checked when fetched), and a private one when the operator allows them', async () => {
    const keyed = (uri: string) => ({
      ...minimal,
      token_endpoint_auth_method: 'private_key_jwt',
      jwks_uri: uri,
    });
    await withEngine('open', async (t) => {
      const info = await t.engine.registration.register(keyed('https://keys.app.example/jwks'), undefined);
      assert.equal(info.jwks_uri, 'https://keys.app.example/jwks');
    });
    // GATEHOUSE_ALLOW_PRIVATE_JWKS_URI, the setting the fetcher obeys (decision 21).
    const t = await testEngine({ dynamicRegistration: 'open', allowPrivateJwksUri: true });
    try {
      for (const uri of ['https://10.1.2.3/jwks', 'https://localhost/jwks']) {
        const info = await t.engine.registration.register(keyed(uri), undefined);
        assert.equal(info.jwks_uri, uri);
      }
    } finally {
      await t.close();
    }
  });

  it('the name the operator gives the product (GATEHOUSE_PRODUCT_NAME) is refused too, with its lookalikes', async () => {
    const t = await testEngine({ dynamicRegistration: 'open', productName: 'Acme ID' });
    try {
      for (const name of ['Acme ID', 'acme id', 'Acme lD', 'ACME 1D', '\u0410\u0441me ID', 'Gatehouse']) {
        await assert.rejects(
          t.engine.registration.register({ ...minimal, client_name: name }, undefined),
          (error: unknown) =>
            error instanceof OAuthError &&
            error.code === 'invalid_client_metadata' &&
            /client_name is, or looks like/.test(error.description),
          name,
        );
      }
      assert.equal((await t.storage.clients.list({ limit: 10, offset: 0 })).total, 0);
      const own = await t.engine.registration.register({ ...minimal, client_name: 'Acme Notes' }, undefined);
      assert.equal(own.client_name, 'Acme Notes');
    } finally {
      await t.close();
    }
  });

  it('a deleted initial access token registers nothing more; its clients stay', async () => {
    await withEngine('token', async (t) => {
      const { token, view } = await t.engine.initialAccessTokens.create({});
      const { client_id } = await t.engine.registration.register(minimal, token);
      await t.engine.initialAccessTokens.delete(view.id);
      await assert.rejects(t.engine.registration.register(minimal, token), RegistrationAuthError);
      assert.ok(await t.storage.clients.get(client_id));
      await assert.rejects(t.engine.initialAccessTokens.delete(view.id), /no initial access token/);
    });
  });
});

describe('initial access tokens as operators make them', () => {
  const rows: {
    name: string;
    input: { expiresIn?: number; scopes?: string[] };
    field?: string;
    lives?: number;
  }[] = [
    { name: 'a day by default', input: {}, lives: 86_400 },
    { name: 'a lifetime given', input: { expiresIn: 600 }, lives: 600 },
    { name: 'under a minute is refused', input: { expiresIn: 59 }, field: 'expires_in' },
    { name: 'over a year is refused', input: { expiresIn: 365 * 86_400 + 1 }, field: 'expires_in' },
    { name: 'admin is never given', input: { scopes: ['openid', 'admin'] }, field: 'scopes' },
    { name: 'a malformed scope', input: { scopes: ['a"b'] }, field: 'scopes' },
  ];
  for (const row of rows) {
    it(row.name, async () => {
      await withEngine('token', async (t) => {
        const attempt = t.engine.initialAccessTokens.create(row.input);
        if (row.field !== undefined) {
          await assert.rejects(
            attempt,
            (error: unknown) => error instanceof ValidationError && error.field === row.field,
          );
          assert.deepEqual(await t.engine.initialAccessTokens.list(), []);
          return;
        }
        const { token, view } = await attempt;
        assert.match(token, /^iat_[A-Za-z0-9_-]{43}$/);
        const [stored] = await t.storage.initialAccessTokens.list();
        assert.equal(stored?.hash, sha256(token), 'stored as its hash only');
        assert.equal(stored?.expiresAt, t.clock.now() + (row.lives ?? 0));
        assert.equal(view.expired, false);
        assert.ok(!JSON.stringify(await t.engine.initialAccessTokens.list()).includes(token));
      });
    });
  }
});

describe('client management with the registration access token (RFC 7592)', () => {
  async function registered(t: TestEngine, metadata: object = minimal) {
    return t.engine.registration.register(metadata, undefined);
  }

  it('reads the client as registered, never with its secret or token', async () => {
    await withEngine('open', async (t) => {
      const created = await registered(t);
      const read = await t.engine.registration.read(created.client_id, created.registration_access_token);
      const { client_secret, registration_access_token, ...rest } = created;
      assert.ok(client_secret && registration_access_token);
      assert.deepEqual(read, rest);
    });
  });

  const refusals: {
    name: string;
    token: (created: ClientInformation, t: TestEngine) => Promise<string | undefined>;
    id?: (created: ClientInformation, t: TestEngine) => Promise<string>;
    code: 'invalid_token' | undefined;
  }[] = [
    { name: 'no token', token: async () => undefined, code: undefined },
    { name: 'a wrong token', token: async () => 'rat_wrong', code: 'invalid_token' },
    {
      name: "another client's token",
      token: async (_c, t) => (await registered(t)).registration_access_token,
      code: 'invalid_token',
    },
    {
      name: 'an unknown client, with a real token: as a wrong token, so ids cannot be probed',
      token: async (c) => c.registration_access_token,
      id: async () => 'no-such-client',
      code: 'invalid_token',
    },
    {
      name: "an operator's client, which has no registration access token",
      token: async (c) => c.registration_access_token,
      id: async (_c, t) => (await addClient(t)).client.id,
      code: 'invalid_token',
    },
  ];
  for (const row of refusals) {
    it(`refuses ${row.name}, reading, updating and deleting alike`, async () => {
      await withEngine('open', async (t) => {
        const created = await registered(t);
        const token = await row.token(created, t);
        const id = row.id ? await row.id(created, t) : created.client_id;
        const refused = (error: unknown) => error instanceof RegistrationAuthError && error.code === row.code;
        await assert.rejects(t.engine.registration.read(id, token), refused);
        await assert.rejects(
          t.engine.registration.update(id, token, { ...minimal, client_id: id, client_name: 'Changed' }),
          refused,
        );
        await assert.rejects(t.engine.registration.delete(id, token), refused);
        const stored = await t.storage.clients.get(created.client_id);
        assert.equal(stored?.name, 'app.example', 'nothing changed');
      });
    });
  }

  const updates: {
    name: string;
    metadata: (created: ClientInformation) => Record<string, unknown>;
    error?: RegExp;
    check?: (updated: ClientInformation, stored: Client, created: ClientInformation) => void;
  }[] = [
    {
      name: 'replaces the metadata whole: a member left out takes its default (RFC 7592 §2.2)',
      metadata: (c) => ({
        client_id: c.client_id,
        redirect_uris: ['https://app.example/new'],
        scope: 'openid',
      }),
      check: (updated, stored) => {
        assert.deepEqual(updated.redirect_uris, ['https://app.example/new']);
        assert.equal(updated.client_name, 'app.example');
        assert.equal(updated.scope, 'openid');
        assert.equal(updated.client_secret, undefined, 'the secret stays; it is not shown again');
        assert.equal(updated.registration_access_token, undefined);
        assert.equal(stored.registration, 'open');
      },
    },
    {
      name: 'the current secret may be sent back',
      metadata: (c) => ({ ...minimal, client_id: c.client_id, client_secret: c.client_secret }),
      check: (_u, stored, created) => assert.equal(stored.secretHash, sha256(created.client_secret ?? '')),
    },
    {
      name: 'a client never chooses its secret',
      metadata: (c) => ({ ...minimal, client_id: c.client_id, client_secret: 'my own secret' }),
      error: /client_secret cannot be chosen/,
    },
    {
      name: 'client_id must be sent',
      metadata: () => ({ ...minimal }),
      error: /client_id must be sent/,
    },
    {
      name: "client_id must be the client's",
      metadata: () => ({ ...minimal, client_id: 'another' }),
      error: /client_id must be sent/,
    },
    {
      name: 'becoming public drops the secret',
      metadata: (c) => ({ ...minimal, client_id: c.client_id, token_endpoint_auth_method: 'none' }),
      check: (updated, stored) => {
        assert.equal(updated.token_endpoint_auth_method, 'none');
        assert.equal(stored.secretHash, null);
      },
    },
    {
      name: 'the limits of registration hold',
      metadata: (c) => ({
        ...minimal,
        client_id: c.client_id,
        grant_types: ['authorization_code', 'password'],
      }),
      error: /"password"/,
    },
    {
      name: 'the product’s name stays out of reach',
      metadata: (c) => ({ ...minimal, client_id: c.client_id, client_name: 'Gateh\u043euse' }),
      error: /client_name is, or looks like/,
    },
    {
      name: 'admin stays out of reach',
      metadata: (c) => ({ ...minimal, client_id: c.client_id, scope: 'admin' }),
      error: /"admin"/,
    },
  ];
  for (const row of updates) {
    it(`update: ${row.name}`, async () => {
      await withEngine('open', async (t) => {
        const created = await registered(t);
        const before = await t.storage.clients.get(created.client_id);
        t.clock.advance(10);
        const attempt = t.engine.registration.update(
          created.client_id,
          created.registration_access_token,
          row.metadata(created),
        );
        if (row.error) {
          await assert.rejects(attempt, (error: unknown) => {
            assert.ok(error instanceof OAuthError);
            assert.equal(error.code, 'invalid_client_metadata');
            assert.match(error.description, row.error as RegExp);
            return true;
          });
          assert.deepEqual(await t.storage.clients.get(created.client_id), before, 'nothing changed');
          return;
        }
        const updated = await attempt;
        const stored = await t.storage.clients.get(created.client_id);
        assert.ok(stored);
        assert.equal(stored.updatedAt, t.clock.now());
        row.check?.(updated, stored, created);
        // The registration access token keeps working after an update.
        await t.engine.registration.read(created.client_id, created.registration_access_token);
      });
    });
  }

  it('a public client made confidential gets a secret, shown once', async () => {
    await withEngine('open', async (t) => {
      const created = await registered(t, { ...minimal, token_endpoint_auth_method: 'none' });
      const updated = await t.engine.registration.update(
        created.client_id,
        created.registration_access_token,
        {
          ...minimal,
          client_id: created.client_id,
          token_endpoint_auth_method: 'client_secret_post',
        },
      );
      assert.match(updated.client_secret ?? '', /^cs_/);
      assert.equal(
        (await t.storage.clients.get(created.client_id))?.secretHash,
        sha256(updated.client_secret ?? ''),
      );
    });
  });

  it('an update is held to the scopes its initial access token allowed, for the client’s whole life', async () => {
    await withEngine('token', async (t) => {
      const { token, view } = await t.engine.initialAccessTokens.create({ scopes: ['profile', 'reports'] });
      const created = await t.engine.registration.register({ ...minimal, scope: 'profile' }, token);
      assert.deepEqual((await t.storage.clients.get(created.client_id))?.registrationScopes, [
        'profile',
        'reports',
      ]);
      const update = (scope: string | undefined) =>
        t.engine.registration.update(created.client_id, created.registration_access_token, {
          ...minimal,
          client_id: created.client_id,
          ...(scope === undefined ? {} : { scope }),
        });
      // Not the open list: the token was made with --scopes "profile reports".
      await assert.rejects(
        update('openid profile email offline_access'),
        /"openid", "email", "offline_access"/,
      );
      await assert.rejects(update('profile email'), /"email" is not open to this registration/);
      assert.deepEqual(
        (await t.storage.clients.get(created.client_id))?.scopes,
        ['profile'],
        'nothing changed',
      );
      assert.equal((await update('profile reports')).scope, 'profile reports');
      // No scope: all of the limits, which are the token's, not the open list.
      assert.equal((await update(undefined)).scope, 'profile reports');
      // Deleting the token ends nothing of what the client was registered under.
      await t.engine.initialAccessTokens.delete(view.id);
      await assert.rejects(update('profile email'), /"email"/);
      assert.equal((await update('reports')).scope, 'reports');
    });
  });

  it('identity_providers is the operator’s: not taken at registration, kept through an RFC 7592 update (decision 39)', async () => {
    await withEngine('open', async (t) => {
      const created = await registered(t, { ...minimal, identity_providers: ['acme'] });
      const stored = await t.storage.clients.get(created.client_id);
      assert.equal(stored?.identityProviders, null, 'a self-registered client offers every provider');
      assert.ok(stored);
      // The operator chooses (the provider need not exist for this store-level set-up).
      await t.storage.clients.update({ ...stored, identityProviders: [] }, 'keep');
      await t.engine.registration.update(created.client_id, created.registration_access_token, {
        ...minimal,
        client_id: created.client_id,
        identity_providers: null,
      });
      assert.deepEqual((await t.storage.clients.get(created.client_id))?.identityProviders, []);
    });
  });

  it('an open client is held to the open list it registered under', async () => {
    await withEngine('open', async (t) => {
      const created = await registered(t, { ...minimal, scope: 'openid' });
      const updated = await t.engine.registration.update(
        created.client_id,
        created.registration_access_token,
        { ...minimal, client_id: created.client_id },
      );
      assert.equal(updated.scope, OPEN_SCOPES.join(' '));
    });
  });

  it('a client registered before its limits were recorded is held to the scopes it has', async () => {
    await withEngine('open', async (t) => {
      const created = await registered(t, { ...minimal, scope: 'profile' });
      const stored = await t.storage.clients.get(created.client_id);
      assert.ok(stored);
      await t.storage.clients.update({ ...stored, registrationScopes: null }, 'keep');
      await assert.rejects(
        t.engine.registration.update(created.client_id, created.registration_access_token, {
          ...minimal,
          client_id: created.client_id,
          scope: 'profile email',
        }),
        /"email"/,
      );
    });
  });

  it('deletes the client, after which its token manages nothing', async () => {
    await withEngine('open', async (t) => {
      const created = await registered(t);
      await t.engine.registration.delete(created.client_id, created.registration_access_token);
      assert.equal(await t.storage.clients.get(created.client_id), undefined);
      await assert.rejects(
        t.engine.registration.read(created.client_id, created.registration_access_token),
        RegistrationAuthError,
      );
    });
  });
});

describe('consent for clients that registered themselves (docs/decisions.md, decision 10)', () => {
  async function request(t: TestEngine, client: Client): Promise<AuthorizationRequest> {
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: client.id,
      redirect_uri: CALLBACK,
    });
    const validation = await t.validateAuthorization(query.toString());
    assert.equal(validation.outcome, 'valid');
    return (validation as { request: AuthorizationRequest }).request;
  }
  for (const registration of ['operator', 'token', 'open'] as const) {
    const when = registration === 'operator' ? 'for a confidential client with an https redirect' : 'never';
    it(`${registration}: remembered ${when}`, async () => {
      await withEngine('open', async (t) => {
        const { client } = await addClient(t, { registration, redirectUris: [CALLBACK] });
        assert.equal(mayReuseConsent(await request(t, client)), registration === 'operator');
      });
    });
  }

  it('the first grant to an anonymous client is recorded, so the purge keeps it', async () => {
    await withEngine('open', async (t) => {
      const { client } = await addClient(t, { registration: 'open', redirectUris: [CALLBACK] });
      const user = await addUser(t);
      const allowed = { scope: [], lifetime: 3600 };
      await t.authorization.approve(await request(t, client), user.id, allowed);
      const first = t.clock.now();
      assert.equal((await t.storage.clients.get(client.id))?.firstGrantedAt, first);
      t.clock.advance(100);
      await t.authorization.approve(await request(t, client), user.id, allowed);
      assert.equal((await t.storage.clients.get(client.id))?.firstGrantedAt, first, 'the first stays');
    });
  });
});
