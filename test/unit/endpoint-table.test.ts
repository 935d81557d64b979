import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Fastify, { type HTTPMethods } from 'fastify';
import { enginePolicy } from '../../src/compose/engine-policy.js';
import { loadConfig, RATE_LIMITED_ENDPOINTS, type GatehouseConfig } from '../../src/config.js';
import {
  ENDPOINTS,
  endpointUrl,
  endpoints,
  limitDecision,
  metadataEndpoints,
  rateLimitedRoutes,
  routePath,
  type Endpoint,
} from '../../src/config/endpoints.js';
import { refuseUndeclaredRoutes, routeProblems, type ServedRoute } from '../../src/http/undeclared-routes.js';

const SECRET = 'a'.repeat(64);

/** The endpoint members the metadata documents had before the table, for three configurations. */
const METADATA_CASES: {
  name: string;
  issuer: string;
  dynamicRegistration: GatehouseConfig['dynamicRegistration'];
  both: [string, string][];
  openIdOnly: [string, string][];
}[] = [
  {
    name: 'registration off',
    issuer: 'https://gatehouse.test',
    dynamicRegistration: 'off',
    both: [
      ['token_endpoint', 'https://gatehouse.test/token'],
      ['jwks_uri', 'https://gatehouse.test/jwks'],
      ['introspection_endpoint', 'https://gatehouse.test/introspect'],
      ['revocation_endpoint', 'https://gatehouse.test/revoke'],
      ['authorization_endpoint', 'https://gatehouse.test/authorize'],
      ['pushed_authorization_request_endpoint', 'https://gatehouse.test/par'],
      ['device_authorization_endpoint', 'https://gatehouse.test/device_authorization'],
    ],
    openIdOnly: [
      ['userinfo_endpoint', 'https://gatehouse.test/userinfo'],
      ['end_session_endpoint', 'https://gatehouse.test/logout'],
    ],
  },
  {
    name: 'open registration under a base path',
    issuer: 'https://example.test/gh',
    dynamicRegistration: 'open',
    both: [
      ['token_endpoint', 'https://example.test/gh/token'],
      ['jwks_uri', 'https://example.test/gh/jwks'],
      ['introspection_endpoint', 'https://example.test/gh/introspect'],
      ['revocation_endpoint', 'https://example.test/gh/revoke'],
      ['authorization_endpoint', 'https://example.test/gh/authorize'],
      ['registration_endpoint', 'https://example.test/gh/register'],
      ['pushed_authorization_request_endpoint', 'https://example.test/gh/par'],
      ['device_authorization_endpoint', 'https://example.test/gh/device_authorization'],
    ],
    openIdOnly: [
      ['userinfo_endpoint', 'https://example.test/gh/userinfo'],
      ['end_session_endpoint', 'https://example.test/gh/logout'],
    ],
  },
  {
    name: 'registration with an initial access token',
    issuer: 'https://gatehouse.test',
    dynamicRegistration: 'token',
    both: [
      ['token_endpoint', 'https://gatehouse.test/token'],
      ['jwks_uri', 'https://gatehouse.test/jwks'],
      ['introspection_endpoint', 'https://gatehouse.test/introspect'],
      ['revocation_endpoint', 'https://gatehouse.test/revoke'],
      ['authorization_endpoint', 'https://gatehouse.test/authorize'],
      ['registration_endpoint', 'https://gatehouse.test/register'],
      ['pushed_authorization_request_endpoint', 'https://gatehouse.test/par'],
      ['device_authorization_endpoint', 'https://gatehouse.test/device_authorization'],
    ],
    openIdOnly: [
      ['userinfo_endpoint', 'https://gatehouse.test/userinfo'],
      ['end_session_endpoint', 'https://gatehouse.test/logout'],
    ],
  },
];

/**
 * The routes the rate limits counted before the table (rate-limit.ts's LIMITED_ROUTES), and the HEADs
 * of its GETs, which Fastify answers with the GET's handler: they were counted nowhere.
 */
const LIMITED: [string, string][] = [
  ['HEAD /authorize', 'authorize'],
  ['HEAD /userinfo', 'userinfo'],
  ['HEAD /logout', 'logout'],
  ['POST /token', 'token'],
  ['POST /par', 'token'],
  ['POST /device_authorization', 'token'],
  ['GET /authorize', 'authorize'],
  ['POST /introspect', 'introspect'],
  ['POST /sign-in', 'signIn'],
  // Decision 37: "Change password" checks the current one like a sign-in.
  ['POST /account/security/password', 'signIn'],
  // Passkeys (decision 33): options store a challenge, answers are sign-in attempts.
  ['POST /sign-in/passkey/options', 'signIn'],
  ['POST /sign-in/passkey', 'signIn'],
  ['POST /sign-in/passkey/second-factor/options', 'signIn'],
  ['POST /sign-in/passkey/second-factor', 'signIn'],
  ['POST /sign-in/passkey/reauthentication/options', 'signIn'],
  ['POST /sign-in/passkey/reauthentication', 'signIn'],
  ['POST /device', 'signIn'],
  // Decision 35: each may send a mail or hash a password.
  ['POST /forgot-password', 'signIn'],
  ['POST /password-reset', 'signIn'],
  ['POST /email-verification', 'signIn'],
  // Decision 34: a code guess is counted like a password guess.
  ['POST /sign-in/second-factor', 'signIn'],
  ['POST /sign-in/second-factor/set-up', 'signIn'],
  ['POST /account/security/authenticator-app/set-up', 'signIn'],
  // Decision 40: the upstream flow's start and callback, each a sign-in's worth of work.
  ['GET /sign-in/upstream/:id', 'signIn'],
  ['HEAD /sign-in/upstream/:id', 'signIn'],
  ['GET /sign-in/callback/:id', 'signIn'],
  ['HEAD /sign-in/callback/:id', 'signIn'],
  ['POST /revoke', 'revoke'],
  ['GET /userinfo', 'userinfo'],
  ['POST /userinfo', 'userinfo'],
  ['GET /logout', 'logout'],
  ['POST /logout', 'logout'],
  ['POST /logout/confirm', 'logout'],
];

const sorted = (entries: [string, string][]) => [...entries].sort(([a], [b]) => a.localeCompare(b));

/** Every route the table declares, as Fastify would register it (a GET with its HEAD). */
function servedAsDeclared(basePath: string, settings: Pick<GatehouseConfig, 'dynamicRegistration'>) {
  const served: ServedRoute[] = [];
  for (const endpoint of endpoints()) {
    if (endpoint.on !== undefined && !endpoint.on(settings)) continue;
    const url = endpoint.path === '/' && basePath !== '' ? basePath : routePath(endpoint, basePath);
    for (const method of Object.keys(endpoint.methods)) {
      const methods = method === '*' ? ['GET', 'HEAD', 'POST', 'DELETE', 'OPTIONS'] : [method];
      if (method === 'GET') methods.push('HEAD');
      const path = endpoint.subtree === true ? `${url}/anything/:id` : url;
      for (const m of methods) served.push({ method: m, url: path });
    }
  }
  return served;
}

describe('the endpoint table (src/config/endpoints.ts, decision 31)', () => {
  for (const c of METADATA_CASES) {
    it(`derives the metadata documents' endpoint members, in their order (${c.name})`, () => {
      const settings = { dynamicRegistration: c.dynamicRegistration };
      assert.deepEqual(Object.entries(metadataEndpoints(c.issuer, settings, 'both')), c.both);
      assert.deepEqual(Object.entries(metadataEndpoints(c.issuer, settings, 'openid-only')), c.openIdOnly);
    });
  }

  for (const basePath of ['', '/gh']) {
    it(`derives the rate-limited routes, as they were listed by hand, and their GETs' HEADs (base path '${basePath}')`, () => {
      const derived = [...rateLimitedRoutes(basePath)].map(([route, bucket]): [string, string] => [
        route,
        bucket,
      ]);
      const expected = LIMITED.map(([route, bucket]): [string, string] => [
        route.replace(' ', ` ${basePath}`),
        bucket,
      ]);
      assert.deepEqual(sorted(derived), sorted(expected));
    });
  }

  it("gives the engine its endpoints' URLs: the audiences at /token and /par", () => {
    for (const issuer of ['https://gatehouse.test', 'https://example.test/gh']) {
      const policy = enginePolicy(
        loadConfig({ dataDir: '/nonexistent', issuer }, { GATEHOUSE_SECRET: SECRET }),
      );
      assert.equal(policy.tokenEndpoint, `${issuer}/token`);
      assert.equal(policy.pushedAuthorizationRequestEndpoint, `${issuer}/par`);
      assert.equal(policy.deviceAuthorization.verificationUri, `${issuer}/device`);
      // A path parameter is filled in percent-encoded: an id cannot add a segment or a query.
      assert.equal(
        policy.dynamicRegistration.clientConfigurationUri('dcr_a b/c?d'),
        `${issuer}/register/dcr_a%20b%2Fc%3Fd`,
      );
    }
  });

  it("puts /v1's protected resource metadata at the origin's root, the base path after the prefix (RFC 9728 §3.1)", () => {
    const endpoint = ENDPOINTS.managementApiMetadata;
    assert.equal(
      endpointUrl('https://gatehouse.test', endpoint),
      'https://gatehouse.test/.well-known/oauth-protected-resource/v1',
    );
    assert.equal(
      endpointUrl('https://example.test/gh', endpoint),
      'https://example.test/.well-known/oauth-protected-resource/gh/v1',
    );
    assert.equal(routePath(endpoint, ''), '/.well-known/oauth-protected-resource/v1');
    assert.equal(routePath(endpoint, '/gh'), '/.well-known/oauth-protected-resource/gh/v1');
    const settings = { dynamicRegistration: 'off' as const };
    const served = servedAsDeclared('/gh', settings).filter(
      (route) => route.url !== routePath(endpoint, '/gh'),
    );
    // Under the base path is not where it belongs: that route is undecided, and the real one missing.
    served.push({ method: 'GET', url: '/gh/.well-known/oauth-protected-resource/v1' });
    assert.deepEqual(routeProblems(served, { basePath: '/gh', settings }), [
      'GET /gh/.well-known/oauth-protected-resource/v1 has no rate-limit decision: declare it in src/config/endpoints.ts (a bucket, its own limit, or unlimited and why)',
      'GET /.well-known/oauth-protected-resource/v1 is declared in src/config/endpoints.ts but not served',
    ]);
  });

  it('refuses to build a URL whose path parameter is not given', () => {
    assert.throws(
      () => endpointUrl('https://gatehouse.test', ENDPOINTS.registrationConfiguration),
      /no value for :id in \/register\/:id/,
    );
  });

  it('uses every rate-limit setting for some endpoint, and gives every decision its reason', () => {
    const buckets = new Set<string>();
    for (const endpoint of endpoints() as Endpoint[]) {
      for (const decision of Object.values(endpoint.methods)) {
        if ('bucket' in decision) buckets.add(decision.bucket);
        if ('unlimited' in decision) assert.notEqual(decision.unlimited.trim(), '', endpoint.path);
        if ('ownLimit' in decision) assert.notEqual(decision.ownLimit.trim(), '', endpoint.path);
      }
    }
    assert.deepEqual([...buckets].sort(), [...RATE_LIMITED_ENDPOINTS].sort());
    const paths = endpoints().map((endpoint) => endpoint.path);
    assert.equal(new Set(paths).size, paths.length, 'each path once');
  });

  it("decides a HEAD as its GET, a surface's every method, and nothing it does not list", () => {
    assert.deepEqual(limitDecision('HEAD', '/authorize'), limitDecision('GET', '/authorize'));
    assert.deepEqual(limitDecision('GET', '/authorize'), { bucket: 'authorize' });
    assert.ok(limitDecision('OPTIONS', '/v1/clients/:id') !== undefined);
    assert.ok(limitDecision('GET', '/assets/style') !== undefined);
    assert.equal(limitDecision('PUT', '/token'), undefined);
    assert.equal(limitDecision('GET', '/v1x'), undefined);
    assert.equal(limitDecision('GET', '/nowhere'), undefined);
  });

  for (const basePath of ['', '/gh']) {
    it(`finds nothing wrong when every declared route is served (base path '${basePath}')`, () => {
      for (const dynamicRegistration of ['off', 'open'] as const) {
        const settings = { dynamicRegistration };
        assert.deepEqual(routeProblems(servedAsDeclared(basePath, settings), { basePath, settings }), []);
      }
    });
  }

  it('names a route served without a decision, one served while off and one declared but not served', () => {
    const settings = { dynamicRegistration: 'off' as const };
    const served = [
      ...servedAsDeclared('', settings).filter((route) => route.url !== '/jwks'),
      { method: 'POST', url: '/nowhere' },
      { method: 'PUT', url: '/token' },
      { method: 'POST', url: '/register' },
    ];
    assert.deepEqual(routeProblems(served, { basePath: '', settings }), [
      'POST /nowhere has no rate-limit decision: declare it in src/config/endpoints.ts (a bucket, its own limit, or unlimited and why)',
      'PUT /token has no rate-limit decision: declare it in src/config/endpoints.ts (a bucket, its own limit, or unlimited and why)',
      'GET /jwks is declared in src/config/endpoints.ts but not served',
      'POST /register is served although it is off with these settings',
    ]);
  });

  it('stops the start of an app with a route the table does not decide a limit for', async () => {
    const app = Fastify();
    const settings = { dynamicRegistration: 'off' as const };
    refuseUndeclaredRoutes(app, { basePath: '', settings });
    for (const { method, url } of servedAsDeclared('', settings)) {
      if (method !== 'HEAD') app.route({ method: method as HTTPMethods, url, handler: async () => '' });
    }
    app.post('/unlimited-by-accident', async () => '');
    await assert.rejects(
      async () => app.ready(),
      (error: Error) => {
        assert.match(error.message, /^the routes disagree with the endpoint table:/);
        assert.match(error.message, /POST \/unlimited-by-accident has no rate-limit decision/);
        assert.doesNotMatch(error.message, /\/token|\/authorize/, 'only the undecided route is named');
        return true;
      },
    );
    await app.close();
  });

  it('lets an app start whose routes all have their decision', async () => {
    const app = Fastify();
    const settings = { dynamicRegistration: 'open' as const };
    refuseUndeclaredRoutes(app, { basePath: '/gh', settings });
    const wellKnown = (url: string) => url.startsWith('/.well-known/oauth-protected-resource/');
    await app.register(
      async (scoped) => {
        for (const { method, url } of servedAsDeclared('', settings)) {
          if (method !== 'HEAD' && !wellKnown(url))
            scoped.route({ method: method as HTTPMethods, url, handler: async () => '' });
        }
      },
      { prefix: '/gh' },
    );
    // RFC 9728 §3.1 (decision 47): at the origin's root, the base path after the well-known prefix.
    for (const { method, url } of servedAsDeclared('/gh', settings)) {
      if (method !== 'HEAD' && wellKnown(url)) {
        app.route({ method: method as HTTPMethods, url, handler: async () => '' });
      }
    }
    await app.ready();
    await app.close();
  });
});
