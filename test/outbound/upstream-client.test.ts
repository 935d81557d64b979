import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { IdentityProvider } from '../../src/core/model.js';
import { seal } from '../../src/core/keys/sealed-box.js';
import { sealContext, UpstreamError, type UpstreamFailureKind } from '../../src/core/federation/upstream.js';
import { OpenIdUpstreamProviders, type UpstreamFetchPolicy } from '../../src/outbound/upstream-client.js';
import { ManualClock } from '../../src/shared/clock.js';
import { testCertificate } from '../helpers/dev-certificate.js';
import { startOidcProvider, type OidcProvider } from '../helpers/upstream-providers.js';

/**
 * The upstream client (src/outbound/upstream-client.ts, decision 38) against a real OpenID Provider
 * (node-oidc-provider, test/helpers/upstream-providers.ts) and small HTTPS servers that misbehave: what
 * a sign-in through it proves, and the kind each failure is given. No browser: the upstream's sign-in
 * form is filled over HTTPS with a cookie jar.
 */

const KEY = randomBytes(32);
const GATEHOUSE = 'https://gatehouse.test';
const SECRET = 'upstream client secret';
const ALICE = {
  subject: 'alice-at-upstream',
  username: 'alice',
  password: 'alice password',
  email: 'alice@example.com',
  emailVerified: true,
  name: 'Alice Upstream',
  amr: ['pwd', 'otp'],
};
const BOB = {
  subject: 'bob-at-upstream',
  username: 'bob',
  password: 'bob password',
  email: 'bob@example.com',
  emailVerified: 'true',
};

const redirectUri = (id: string) => `${GATEHOUSE}/sign-in/callback/${id}`;

function provider(id: string, overrides: Partial<IdentityProvider> = {}): IdentityProvider {
  return {
    id,
    name: id,
    kind: 'oidc',
    issuer: null,
    authorizationEndpoint: null,
    tokenEndpoint: null,
    userinfoEndpoint: null,
    clientId: id,
    clientAuth: 'client_secret_basic',
    clientSecretSealed: seal(KEY, Buffer.from(SECRET), sealContext.clientSecret(id)),
    privateKeySealed: null,
    publicJwk: null,
    scopes: ['openid', 'email', 'profile'],
    claimMapping: {
      subject: 'sub',
      username: 'preferred_username',
      email: 'email',
      emailVerified: 'email_verified',
      name: 'name',
    },
    linkByVerifiedEmail: false,
    trustUpstreamAssurance: false,
    requiredAcr: null,
    logoUri: null,
    createdAt: 1,
    updatedAt: 1,
    ...overrides,
  };
}

async function rejectsWith(
  promise: Promise<unknown>,
  kind: UpstreamFailureKind,
  detail?: RegExp,
): Promise<UpstreamError> {
  const error = await promise.then(
    () => assert.fail(`expected an UpstreamError (${kind})`),
    (caught: unknown) => caught,
  );
  assert.ok(error instanceof UpstreamError, `not an UpstreamError: ${String(error)}`);
  assert.equal(error.kind, kind, `kind ${error.kind}: ${error.detail}`);
  if (detail !== undefined) assert.match(error.detail, detail);
  // Nothing secret or upstream-written in what may be shown.
  assert.doesNotMatch(error.message, /upstream client secret|<|alice password/);
  return error;
}

/** An https server on 127.0.0.1 with the test certificate; `handler` answers (or holds) each request. */
async function startServer(handler: (req: IncomingMessage, res: ServerResponse, body: string) => void) {
  const tls = await testCertificate();
  const server: Server = createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => handler(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

describe('the upstream client against node-oidc-provider', () => {
  let upstream: OidcProvider;
  let other: OidcProvider;
  let clock: ManualClock;
  let client: OpenIdUpstreamProviders;
  let policy: UpstreamFetchPolicy;
  const ecKey = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const publicJwk = {
    ...ecKey.publicKey.export({ format: 'jwk' }),
    kid: 'gatehouse-upstream-1',
    alg: 'ES256',
    use: 'sig',
  };

  before(async () => {
    upstream = await startOidcProvider({
      accounts: [ALICE, BOB],
      clients: [
        { clientId: 'basic', clientSecret: SECRET, redirectUris: [redirectUri('basic')] },
        {
          clientId: 'post',
          clientSecret: SECRET,
          redirectUris: [redirectUri('post')],
          tokenEndpointAuthMethod: 'client_secret_post',
        },
        {
          clientId: 'keyed',
          redirectUris: [redirectUri('keyed')],
          tokenEndpointAuthMethod: 'private_key_jwt',
          jwks: { keys: [publicJwk] },
        },
      ],
    });
    other = await startOidcProvider({ accounts: [ALICE] });
    other.registerClient({ clientId: 'basic', clientSecret: SECRET, redirectUris: [redirectUri('basic')] });
    clock = new ManualClock();
    policy = { timeoutMs: 10_000, maxBytes: 256 * 1024, ca: upstream.ca };
    client = new OpenIdUpstreamProviders({ identityProviderKey: KEY, policy, clock });
  });
  after(async () => {
    client.close();
    await upstream.close();
    await other.close();
  });

  /** begin, sign in at the upstream, and answer what finish needs. */
  async function signIn(
    idp: IdentityProvider,
    as: { username: string; password: string } | 'cancel' = ALICE,
  ) {
    const authorization = await client.begin(idp, redirectUri(idp.id), {});
    const at = idp.issuer === other.issuer ? other : upstream;
    const callback = await at.signIn(authorization.url, as);
    return { authorization, callback };
  }

  it('discovers an OpenID Provider', async () => {
    const found = await client.discover(upstream.issuer);
    assert.deepEqual(found, {
      issuer: upstream.issuer,
      authorizationEndpoint: `${upstream.issuer}/auth`,
      tokenEndpoint: `${upstream.issuer}/token`,
      userinfoEndpoint: `${upstream.issuer}/me`,
    });
  });

  it('asks for the code flow with PKCE, state, nonce, the acr values, max_age, prompt and login_hint', async () => {
    const idp = provider('basic', {
      issuer: upstream.issuer,
      requiredAcr: 'urn:gatehouse:test:loa:2',
      scopes: ['email'],
    });
    const authorization = await client.begin(idp, redirectUri('basic'), {
      acrValues: ['urn:gatehouse:test:loa:2', 'urn:gatehouse:test:loa:1'],
      maxAge: 300,
      prompt: 'login',
      loginHint: 'alice',
    });
    const url = new URL(authorization.url);
    assert.equal(url.origin + url.pathname, `${upstream.issuer}/auth`);
    const query = Object.fromEntries(url.searchParams);
    assert.equal(query.response_type, 'code');
    assert.equal(query.client_id, 'basic');
    assert.equal(query.redirect_uri, redirectUri('basic'));
    assert.deepEqual(query.scope?.split(' ').sort(), ['email', 'openid']);
    assert.equal(query.code_challenge_method, 'S256');
    assert.match(query.code_challenge ?? '', /^[\w-]{43}$/);
    assert.equal(query.state, authorization.state);
    assert.equal(query.nonce, authorization.nonce);
    assert.equal(query.acr_values, 'urn:gatehouse:test:loa:2 urn:gatehouse:test:loa:1');
    assert.equal(query.max_age, '300');
    assert.equal(query.prompt, 'login');
    assert.equal(query.login_hint, 'alice');
    assert.equal(authorization.maxAge, 300);
    assert.match(authorization.codeVerifier, /^[\w-]{43,128}$/);
    // Each begin is fresh.
    const again = await client.begin(idp, redirectUri('basic'), {});
    assert.notEqual(again.state, authorization.state);
    assert.notEqual(again.nonce, authorization.nonce);
    assert.notEqual(again.codeVerifier, authorization.codeVerifier);
  });

  it('signs in: the ID token checked, userinfo read, claims mapped, amr and acr passed on', async () => {
    const idp = provider('basic', { issuer: upstream.issuer, requiredAcr: 'urn:gatehouse:test:loa:2' });
    const authorization = await client.begin(idp, redirectUri('basic'), {});
    const callback = await upstream.signIn(authorization.url, ALICE);
    assert.equal(callback.origin + callback.pathname, redirectUri('basic'));
    // RFC 9207: the upstream names itself in its answer.
    assert.equal(callback.searchParams.get('iss'), upstream.issuer);
    const before = upstream.requests.length;
    const identity = await client.finish(idp, redirectUri('basic'), callback, authorization);
    assert.deepEqual(identity, {
      issuer: upstream.issuer,
      subject: ALICE.subject,
      username: ALICE.username,
      email: ALICE.email,
      emailVerified: true,
      name: ALICE.name,
      amr: ['pwd', 'otp'],
      acr: 'urn:gatehouse:test:loa:2',
    });
    const calls = upstream.requests.slice(before);
    assert.ok(calls.includes('POST /token'));
    assert.ok(calls.includes('GET /jwks'), 'the ID token signature is checked against the JWK Set');
    assert.ok(calls.includes('GET /me'), 'userinfo is read');
  });

  it('takes email_verified as true only for a JSON true', async () => {
    const idp = provider('basic', { issuer: upstream.issuer });
    const { authorization, callback } = await signIn(idp, BOB);
    const identity = await client.finish(idp, redirectUri('basic'), callback, authorization);
    assert.equal(identity.subject, BOB.subject);
    assert.equal(identity.email, BOB.email);
    assert.equal(identity.emailVerified, false);
  });

  it('authenticates with client_secret_post', async () => {
    const idp = provider('post', { issuer: upstream.issuer, clientAuth: 'client_secret_post' });
    const { authorization, callback } = await signIn(idp);
    const identity = await client.finish(idp, redirectUri('post'), callback, authorization);
    assert.equal(identity.subject, ALICE.subject);
  });

  it('authenticates with private_key_jwt, the key opened from its sealed PKCS#8', async () => {
    const der = ecKey.privateKey.export({ format: 'der', type: 'pkcs8' });
    const idp = provider('keyed', {
      issuer: upstream.issuer,
      clientAuth: 'private_key_jwt',
      clientSecretSealed: null,
      privateKeySealed: seal(KEY, der, sealContext.privateKey('keyed')),
      publicJwk,
    });
    const { authorization, callback } = await signIn(idp);
    const identity = await client.finish(idp, redirectUri('keyed'), callback, authorization);
    assert.equal(identity.subject, ALICE.subject);

    // A key sealed for another provider does not open as this one's.
    const misplaced = provider('keyed', {
      ...idp,
      privateKeySealed: seal(KEY, der, sealContext.privateKey('elsewhere')),
      updatedAt: 2,
    });
    await rejectsWith(client.begin(misplaced, redirectUri('keyed'), {}), 'unreachable', /private key/);
  });

  it('refuses a wrong client secret with the upstream error code alone', async () => {
    const idp = provider('basic', {
      issuer: upstream.issuer,
      clientSecretSealed: seal(KEY, Buffer.from('not the secret'), sealContext.clientSecret('basic')),
    });
    const { authorization, callback } = await signIn(idp);
    await rejectsWith(
      client.finish(idp, redirectUri('basic'), callback, authorization),
      'upstream-error',
      /^invalid_client$/,
    );
  });

  it("refuses a callback whose state is not this sign-in's, before redeeming its code", async () => {
    const idp = provider('basic', { issuer: upstream.issuer });
    const { authorization, callback } = await signIn(idp);
    const before = upstream.requests.length;
    await rejectsWith(
      client.finish(idp, redirectUri('basic'), callback, { ...authorization, state: 'another-state' }),
      'invalid-response',
      /state/,
    );
    const noState = new URL(callback);
    noState.searchParams.delete('state');
    await rejectsWith(
      client.finish(idp, redirectUri('basic'), noState, authorization),
      'invalid-response',
      /state/,
    );
    assert.deepEqual(upstream.requests.slice(before), [], 'no code was redeemed');
  });

  it("refuses an ID token whose nonce is not this sign-in's", async () => {
    const idp = provider('basic', { issuer: upstream.issuer });
    const { authorization, callback } = await signIn(idp);
    await rejectsWith(
      client.finish(idp, redirectUri('basic'), callback, { ...authorization, nonce: 'another-nonce' }),
      'invalid-response',
      /nonce/,
    );
  });

  it('refuses a code redeemed twice', async () => {
    const idp = provider('basic', { issuer: upstream.issuer });
    const { authorization, callback } = await signIn(idp);
    await client.finish(idp, redirectUri('basic'), callback, authorization);
    await rejectsWith(
      client.finish(idp, redirectUri('basic'), callback, authorization),
      'upstream-error',
      /^invalid_grant$/,
    );
  });

  it('refuses a wrong PKCE verifier', async () => {
    const idp = provider('basic', { issuer: upstream.issuer });
    const { authorization, callback } = await signIn(idp);
    await rejectsWith(
      client.finish(idp, redirectUri('basic'), callback, { ...authorization, codeVerifier: 'x'.repeat(43) }),
      'upstream-error',
      /^invalid_grant$/,
    );
  });

  it('refuses a callback that names another issuer, or none where the upstream names itself (RFC 9207)', async () => {
    const idp = provider('basic', { issuer: upstream.issuer });
    const { authorization, callback } = await signIn(idp);
    const wrong = new URL(callback);
    wrong.searchParams.set('iss', other.issuer);
    await rejectsWith(client.finish(idp, redirectUri('basic'), wrong, authorization), 'wrong-issuer');
    const missing = new URL(callback);
    missing.searchParams.delete('iss');
    await rejectsWith(client.finish(idp, redirectUri('basic'), missing, authorization), 'wrong-issuer');
    // The right one still redeems (nothing was redeemed above).
    const identity = await client.finish(idp, redirectUri('basic'), callback, authorization);
    assert.equal(identity.subject, ALICE.subject);
  });

  it("refuses another provider's answer (a mix-up) as from the wrong issuer", async () => {
    const idpA = provider('basic', { issuer: upstream.issuer });
    const idpB = provider('basic', { issuer: other.issuer, updatedAt: 5 });
    const atA = await client.begin(idpA, redirectUri('basic'), {});
    const atB = await client.begin(idpB, redirectUri('basic'), {});
    // The browser went to B, and B's answer reaches the callback of a sign-in begun with A.
    const fromB = await other.signIn(atB.url, ALICE);
    await rejectsWith(
      client.finish(idpA, redirectUri('basic'), fromB, { ...atA, state: atB.state }),
      'wrong-issuer',
    );
  });

  it('says access_denied when the person cancels upstream, and shows other error codes alone', async () => {
    const idp = provider('basic', { issuer: upstream.issuer });
    const { authorization, callback } = await signIn(idp, 'cancel');
    assert.equal(callback.searchParams.get('error'), 'access_denied');
    await rejectsWith(
      client.finish(idp, redirectUri('basic'), callback, authorization),
      'denied',
      /^access_denied$/,
    );

    const error = (code: string) => {
      const url = new URL(redirectUri('basic'));
      url.searchParams.set('error', code);
      url.searchParams.set('error_description', '<b>upstream HTML</b>');
      url.searchParams.set('state', authorization.state);
      url.searchParams.set('iss', upstream.issuer);
      return url;
    };
    await rejectsWith(
      client.finish(idp, redirectUri('basic'), error('temporarily_unavailable'), authorization),
      'upstream-error',
      /^temporarily_unavailable$/,
    );
    const unreadable = await rejectsWith(
      client.finish(idp, redirectUri('basic'), error('<script>x</script>'.repeat(10)), authorization),
      'upstream-error',
    );
    assert.doesNotMatch(unreadable.detail, /script/);
  });

  it("checks the ID token's expiry by the clock it is given", async () => {
    const idp = provider('basic', { issuer: upstream.issuer });
    const { authorization, callback } = await signIn(idp);
    clock.advance(3600);
    try {
      await rejectsWith(
        client.finish(idp, redirectUri('basic'), callback, authorization),
        'invalid-response',
        /expired/,
      );
    } finally {
      clock.advance(-3600);
    }
  });

  it('checks auth_time against the max_age it sent', async () => {
    const idp = provider('basic', { issuer: upstream.issuer });
    const authorization = await client.begin(idp, redirectUri('basic'), { maxAge: 60 });
    assert.equal(authorization.maxAge, 60);
    const callback = await upstream.signIn(authorization.url, ALICE);
    // Two minutes on: the ID token is still valid, the sign-in it reports is older than max_age.
    clock.advance(120);
    try {
      await rejectsWith(
        client.finish(idp, redirectUri('basic'), callback, authorization),
        'invalid-response',
        /max_age/,
      );
    } finally {
      clock.advance(-120);
    }
    const fresh = await client.begin(idp, redirectUri('basic'), { maxAge: 60 });
    const identity = await client.finish(
      idp,
      redirectUri('basic'),
      await upstream.signIn(fresh.url, ALICE),
      fresh,
    );
    assert.equal(identity.subject, ALICE.subject);
  });

  it("refuses userinfo whose sub is not the ID token's", async () => {
    const idp = provider('basic', { issuer: upstream.issuer });
    const { authorization, callback } = await signIn(idp);
    upstream.intercept = (req, res) => {
      if (!req.url?.startsWith('/me')) return false;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ sub: 'mallory' }));
      return true;
    };
    try {
      await rejectsWith(
        client.finish(idp, redirectUri('basic'), callback, authorization),
        'invalid-response',
        /sub/,
      );
    } finally {
      upstream.intercept = undefined;
    }
  });

  it('refuses an ID token no key of the upstream verifies', async () => {
    // A client of its own, so that the upstream's JWK Set is fetched (and answered by the test).
    const fresh = new OpenIdUpstreamProviders({ identityProviderKey: KEY, policy, clock });
    const idp = provider('basic', { issuer: upstream.issuer });
    const authorization = await fresh.begin(idp, redirectUri('basic'), {});
    const callback = await upstream.signIn(authorization.url, ALICE);
    const stranger = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' });
    upstream.intercept = (req, res) => {
      if (req.url !== '/jwks') return false;
      res.writeHead(200, { 'content-type': 'application/jwk-set+json' });
      res.end(JSON.stringify({ keys: [{ ...stranger, kid: 'stranger', alg: 'ES256', use: 'sig' }] }));
      return true;
    };
    try {
      await rejectsWith(fresh.finish(idp, redirectUri('basic'), callback, authorization), 'invalid-response');
    } finally {
      upstream.intercept = undefined;
      fresh.close();
    }
  });

  it('refuses a discovery document that names another issuer', async () => {
    const fresh = new OpenIdUpstreamProviders({ identityProviderKey: KEY, policy, clock });
    upstream.intercept = (req, res) => {
      if (req.url !== '/.well-known/openid-configuration') return false;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ issuer: other.issuer, authorization_endpoint: `${other.issuer}/auth` }));
      return true;
    };
    try {
      await rejectsWith(fresh.discover(upstream.issuer), 'wrong-issuer');
    } finally {
      upstream.intercept = undefined;
      fresh.close();
    }
  });

  it('finds an upstream whose answers are too large, or whose certificate is not trusted, unreachable', async () => {
    const fresh = new OpenIdUpstreamProviders({
      identityProviderKey: KEY,
      policy: { ...policy, maxBytes: 4096 },
      clock,
    });
    upstream.intercept = (req, res) => {
      if (req.url !== '/.well-known/openid-configuration') return false;
      // Declared honestly or not, 2 MB is refused.
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ issuer: upstream.issuer, padding: 'x'.repeat(2 * 1024 * 1024) }));
      return true;
    };
    try {
      await rejectsWith(fresh.discover(upstream.issuer), 'unreachable', /larger/);
    } finally {
      upstream.intercept = undefined;
      fresh.close();
    }
    const untrusting = new OpenIdUpstreamProviders({
      identityProviderKey: KEY,
      policy: { timeoutMs: 10_000, maxBytes: 65536 },
    });
    await rejectsWith(untrusting.discover(upstream.issuer), 'unreachable', /certificate/);
    untrusting.close();
    await rejectsWith(client.discover('http://127.0.0.1:1/'), 'unreachable', /https/);
  });
});

describe('the upstream client against servers that misbehave, and a plain OAuth 2.0 provider', () => {
  it('finds an upstream that does not answer in time, or refuses the connection, unreachable', async () => {
    const held: ServerResponse[] = [];
    const server = await startServer((_req, res) => held.push(res)); // never answers
    const tls = await testCertificate();
    const client = new OpenIdUpstreamProviders({
      identityProviderKey: KEY,
      // The timeout is what is under test: the server never answers, whatever the time given.
      policy: { timeoutMs: 200, maxBytes: 65536, ca: tls.cert },
    });
    try {
      await rejectsWith(client.discover(server.origin), 'unreachable', /no answer within 200 ms/);
      const idp = provider('slow', {
        kind: 'oauth2',
        authorizationEndpoint: `${server.origin}/authorize`,
        tokenEndpoint: `${server.origin}/token`,
        userinfoEndpoint: `${server.origin}/user`,
      });
      const authorization = await client.begin(idp, redirectUri('slow'), {});
      const callback = new URL(`${redirectUri('slow')}?code=c&state=${authorization.state}`);
      await rejectsWith(
        client.finish(idp, redirectUri('slow'), callback, authorization),
        'unreachable',
        /no answer/,
      );
    } finally {
      await server.close();
    }
    // The server is gone: the connection is refused.
    await rejectsWith(client.discover(server.origin), 'unreachable', /refused/);
    client.close();
  });

  it('signs in through a plain OAuth 2.0 provider: PKCE, client auth, userinfo mapped by dotted paths', async () => {
    const seen: Array<{ path: string; authorization: string | undefined; body: string }> = [];
    let userinfo: unknown = {
      id: 583231,
      login: 'octocat',
      contact: { email: 'octo@example.com', verified: true },
      profile: { name: 'The Octocat' },
    };
    const server = await startServer((req, res, body) => {
      seen.push({ path: req.url ?? '', authorization: req.headers.authorization, body });
      if (req.url === '/token' && req.method === 'POST') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({ access_token: 'upstream-access-token', token_type: 'bearer', scope: 'read:user' }),
        );
      } else if (req.url === '/user' && req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(userinfo));
      } else {
        res.writeHead(404).end();
      }
    });
    const tls = await testCertificate();
    const client = new OpenIdUpstreamProviders({
      identityProviderKey: KEY,
      policy: { timeoutMs: 10_000, maxBytes: 65536, ca: tls.cert },
    });
    const idp = provider('octo', {
      kind: 'oauth2',
      authorizationEndpoint: `${server.origin}/authorize`,
      tokenEndpoint: `${server.origin}/token`,
      userinfoEndpoint: `${server.origin}/user`,
      scopes: ['read:user'],
      claimMapping: {
        subject: 'id',
        username: 'login',
        email: 'contact.email',
        emailVerified: 'contact.verified',
        name: 'profile.name',
      },
    });
    try {
      const authorization = await client.begin(idp, redirectUri('octo'), {});
      assert.equal(authorization.nonce, null);
      const url = new URL(authorization.url);
      assert.equal(
        url.searchParams.get('scope'),
        'read:user',
        'no openid scope for a plain OAuth 2.0 provider',
      );
      assert.equal(url.searchParams.has('nonce'), false);
      assert.equal(url.searchParams.get('code_challenge_method'), 'S256');
      // An iss it sends is not compared with anything: it has no issuer.
      const callback = new URL(
        `https://elsewhere.test/sign-in/callback/octo?code=the-code&state=${authorization.state}&iss=https://whatever.test`,
      );
      const identity = await client.finish(idp, redirectUri('octo'), callback, authorization);
      assert.deepEqual(identity, {
        issuer: 'urn:gatehouse:idp:octo',
        subject: '583231',
        username: 'octocat',
        email: 'octo@example.com',
        emailVerified: true,
        name: 'The Octocat',
        amr: null,
        acr: null,
      });
      const token = seen.find((request) => request.path === '/token');
      const form = new URLSearchParams(token?.body);
      assert.equal(form.get('grant_type'), 'authorization_code');
      assert.equal(form.get('code'), 'the-code');
      assert.equal(form.get('code_verifier'), authorization.codeVerifier);
      assert.equal(
        form.get('redirect_uri'),
        redirectUri('octo'),
        'the registered redirect URI, not the browser URL',
      );
      assert.equal(
        token?.authorization,
        `Basic ${Buffer.from(`octo:${encodeURIComponent(SECRET).replace(/%20/g, '+')}`).toString('base64')}`,
      );
      assert.equal(
        seen.find((request) => request.path === '/user')?.authorization,
        'Bearer upstream-access-token',
      );

      // No subject at the mapped path: refused.
      userinfo = { login: 'octocat' };
      const again = await client.begin(idp, redirectUri('octo'), {});
      await rejectsWith(
        client.finish(
          idp,
          redirectUri('octo'),
          new URL(`${redirectUri('octo')}?code=c2&state=${again.state}`),
          again,
        ),
        'invalid-response',
        /subject/,
      );
    } finally {
      client.close();
      await server.close();
    }
  });
});
