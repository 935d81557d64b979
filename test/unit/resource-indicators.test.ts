import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { InvalidAccessTokenError } from '../../src/core/tokens/access-token-validation.js';
import { OAuthError } from '../../src/core/errors.js';
import type { Client, ResourceServer, User } from '../../src/core/model.js';
import { UserInfoError } from '../../src/core/oidc/userinfo.js';
import {
  audienceOf,
  canonicalResourceUri,
  narrowResources,
  parseResources,
  scopeForResources,
} from '../../src/core/scopes/resources.js';
import type { TokenResponse } from '../../src/core/tokens/token-issuer.js';
import { ConflictError, NotFoundError, ValidationError } from '../../src/core/validation.js';
import { sha256 } from '../../src/shared/crypto.js';
import {
  addClient,
  addUser,
  basic,
  expectOAuthError,
  PASSWORD,
  REDIRECT,
  seedCode,
  type ExpectedError,
} from '../helpers/fakes/fixtures.js';
import { ISSUER, testEngine, type TestEngine } from '../helpers/fakes/test-engine.js';

const API = 'https://api.example';
const FILES = 'https://files.example/v1';
const ANY = 'https://any.example/mcp';
const UNREGISTERED = 'https://elsewhere.example';

const resource = (uri: string, scopes: string[]): ResourceServer => ({
  uri,
  name: null,
  scopes,
  createdAt: 0,
});

/** The OAuth error `run` throws (it must throw one). */
function oauthErrorOf(run: () => unknown): OAuthError {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof OAuthError, String(error));
    return error;
  }
  assert.fail('expected an OAuthError');
}

describe('resource URIs (RFC 8707 §2)', () => {
  const rows: [string, string | { problem: RegExp }][] = [
    ['https://api.example', 'https://api.example'],
    ['https://api.example/', 'https://api.example'],
    ['HTTPS://API.Example:443/', 'https://api.example'],
    ['https://api.example/mcp', 'https://api.example/mcp'],
    ['https://api.example/mcp/', 'https://api.example/mcp/'],
    ['https://api.example/a/../b', 'https://api.example/b'],
    ['https://api.example/?tenant=1', 'https://api.example/?tenant=1'],
    ['https://api.example:8443/x', 'https://api.example:8443/x'],
    ['http://localhost:3000/mcp', 'http://localhost:3000/mcp'],
    ['http://127.0.0.1:9000', 'http://127.0.0.1:9000'],
    ['http://[::1]/', 'http://[::1]'],
    ['https://api.example/x#frag', { problem: /fragment/ }],
    ['http://api.example', { problem: /https/ }],
    ['urn:example:resource', { problem: /https/ }],
    ['/relative/path', { problem: /absolute/ }],
    ['https://user@api.example', { problem: /user information/ }],
    ['https:api.example/x', { problem: /authority/ }],
    ['https://api.example\\@evil.example', { problem: /backslash/ }],
    ['https://api.example/a b', { problem: /spaces/ }],
    [`https://api.example/${'a'.repeat(2000)}`, { problem: /longer than 2000/ }],
  ];
  for (const [input, expected] of rows) {
    it(`${input.slice(0, 60)} → ${typeof expected === 'string' ? expected : String(expected.problem)}`, () => {
      const canonical = canonicalResourceUri(input);
      if (typeof expected === 'string') assert.equal(canonical.uri, expected);
      else assert.match(canonical.problem ?? '(accepted)', expected.problem);
    });
  }

  it('parses repeated values into canonical URIs, each once, in order; empty values count as omitted', () => {
    assert.deepEqual(parseResources([FILES, 'https://API.example/', '', API]), [FILES, API]);
    assert.deepEqual(parseResources([]), []);
  });

  for (const [name, values] of [
    ['a relative reference', ['/api']],
    ['a fragment', ['https://api.example#x']],
    ['not a URI at all', ['api example']],
    ['more than 16 resources', Array.from({ length: 17 }, (_, i) => `https://r${i}.example`)],
  ] as const) {
    it(`refuses ${name} with invalid_target`, () => {
      const error = oauthErrorOf(() => parseResources(values));
      assert.equal(error.code, 'invalid_target');
      assert.equal(error.status, 400);
      assert.ok(!error.description.includes('"'), 'nothing RFC 6749 §5.2 forbids in a description');
    });
  }

  it('makes the aud: the issuer for none, a string for one, an array for several', () => {
    assert.equal(audienceOf([], ISSUER), ISSUER);
    assert.equal(audienceOf([API], ISSUER), API);
    assert.deepEqual(audienceOf([API, FILES], ISSUER), [API, FILES]);
  });
});

describe('the scope of a request for resources', () => {
  const api = resource(API, ['read']);
  const files = resource(FILES, ['write']);
  const any = resource(ANY, []);
  const rows: {
    name: string;
    requested: string[] | undefined;
    fallback: string[];
    resources: ResourceServer[];
    expected: string[] | 'invalid_target';
  }[] = [
    {
      name: 'no resources: the request',
      requested: ['write'],
      fallback: ['read'],
      resources: [],
      expected: ['write'],
    },
    {
      name: 'no resources: the default',
      requested: undefined,
      fallback: ['read'],
      resources: [],
      expected: ['read'],
    },
    {
      name: 'requested, offered',
      requested: ['read'],
      fallback: ['read', 'write'],
      resources: [api],
      expected: ['read'],
    },
    {
      name: 'requested, not offered by the one resource',
      requested: ['read', 'write'],
      fallback: ['read', 'write'],
      resources: [api],
      expected: 'invalid_target',
    },
    {
      name: 'each requested scope offered by one of several',
      requested: ['read', 'write'],
      fallback: ['read', 'write'],
      resources: [api, files],
      expected: ['read', 'write'],
    },
    {
      name: 'a resource without scopes offers all',
      requested: ['admin'],
      fallback: ['admin'],
      resources: [api, any],
      expected: ['admin'],
    },
    {
      name: 'openid and offline_access need no resource to offer them',
      requested: ['openid', 'offline_access', 'read'],
      fallback: ['openid', 'offline_access', 'read'],
      resources: [api],
      expected: ['openid', 'offline_access', 'read'],
    },
    {
      name: 'the default: what the resources offer of the client’s scopes, openid kept',
      requested: undefined,
      fallback: ['openid', 'read', 'write', 'admin'],
      resources: [api],
      expected: ['openid', 'read'],
    },
    {
      name: 'the default, when the resources offer none of the client’s scopes',
      requested: undefined,
      fallback: ['openid', 'admin'],
      resources: [api, files],
      expected: 'invalid_target',
    },
    {
      name: 'the default of a client with no scopes stays empty',
      requested: undefined,
      fallback: [],
      resources: [api],
      expected: [],
    },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const run = () => scopeForResources(row.requested, row.fallback, row.resources);
      if (row.expected === 'invalid_target') assert.equal(oauthErrorOf(run).code, 'invalid_target');
      else assert.deepEqual(run(), row.expected);
    });
  }
});

describe('narrowing the resources of a grant (RFC 8707 §2.2)', () => {
  const rows: {
    name: string;
    requested: string[];
    granted: string[];
    expected: string[] | RegExp;
  }[] = [
    {
      name: 'nothing asked: all of the grant’s',
      requested: [],
      granted: [API, FILES],
      expected: [API, FILES],
    },
    { name: 'nothing asked, nothing granted', requested: [], granted: [], expected: [] },
    { name: 'a subset', requested: [FILES], granted: [API, FILES], expected: [FILES] },
    {
      name: 'another resource',
      requested: [ANY],
      granted: [API],
      expected: /not a resource of the authorization/,
    },
    {
      name: 'one more than granted',
      requested: [API, ANY],
      granted: [API],
      expected: /https:\/\/any\.example\/mcp/,
    },
    {
      name: 'a resource when none was granted',
      requested: [API],
      granted: [],
      expected: /named no resource/,
    },
    {
      name: 'the issuer when none was granted: what none means',
      requested: [ISSUER],
      granted: [],
      expected: [],
    },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const run = () => narrowResources(row.requested, row.granted, ISSUER);
      if (Array.isArray(row.expected)) assert.deepEqual(run(), row.expected);
      else {
        const error = oauthErrorOf(run);
        assert.equal(error.code, 'invalid_target');
        assert.match(error.description, row.expected);
      }
    });
  }
});

/** One engine for the token-endpoint rows: API offers read, FILES write, ANY every scope. */
describe('resource indicators at the token endpoint and the authorization endpoint', () => {
  let t: TestEngine;
  before(async () => {
    t = await testEngine();
    await t.engine.resources.create({ uri: API, scopes: ['read'], name: 'The API' });
    await t.engine.resources.create({ uri: FILES, scopes: ['write'] });
    await t.engine.resources.create({ uri: ANY });
  });
  after(() => t.close());

  /** A confidential client registered for every grant, scopes read, write and admin. */
  async function newClient(fields: Partial<Client> = {}): Promise<{ client: Client; secret: string }> {
    return addClient(t, {
      grantTypes: ['authorization_code', 'refresh_token', 'client_credentials', 'password'],
      scopes: ['read', 'write', 'admin'],
      ...fields,
    });
  }

  function token(
    party: { client: Client; secret: string },
    params: Record<string, string>,
    resources: string[] = [],
  ): Promise<TokenResponse> {
    return t.token({ authorization: basic(party.client.id, party.secret), params, resources });
  }

  /** The token's claims, after the validator accepts it for any audience (RFC 8707 tokens). */
  async function claimsOf(response: TokenResponse) {
    await t.tokens.validator.validate(response.access_token, 'any');
    return decodeJwt(response.access_token);
  }

  describe('client_credentials', () => {
    const rows: {
      name: string;
      scope?: string;
      resources: string[];
      expected: { aud: string | string[]; scope: string } | ExpectedError;
    }[] = [
      {
        name: 'no resource: the issuer, as before',
        resources: [],
        expected: { aud: ISSUER, scope: 'read write admin' },
      },
      {
        name: 'one resource: its URI, and the scope it offers',
        resources: [API],
        expected: { aud: API, scope: 'read' },
      },
      {
        name: 'another spelling of the URI: the registered one',
        resources: ['HTTPS://api.example/'],
        expected: { aud: API, scope: 'read' },
      },
      {
        name: 'two resources: both, and what either offers',
        resources: [API, FILES],
        expected: { aud: [API, FILES], scope: 'read write' },
      },
      {
        name: 'a resource offering every scope',
        resources: [ANY],
        expected: { aud: ANY, scope: 'read write admin' },
      },
      {
        name: 'a requested scope the resource offers',
        scope: 'read',
        resources: [API],
        expected: { aud: API, scope: 'read' },
      },
      {
        name: 'a requested scope the resource does not offer',
        scope: 'write',
        resources: [API],
        expected: { code: 'invalid_target', status: 400, description: /do not offer the scope write/ },
      },
      {
        name: 'the issuer is always a resource, and offers every scope',
        scope: 'admin read',
        resources: [ISSUER, API],
        expected: { aud: [ISSUER, API], scope: 'admin read' },
      },
      {
        name: 'the issuer alone',
        resources: [`${ISSUER}/`],
        expected: { aud: ISSUER, scope: 'read write admin' },
      },
      {
        name: 'an unregistered resource',
        resources: [UNREGISTERED],
        expected: {
          code: 'invalid_target',
          status: 400,
          description: `resource not registered here: ${UNREGISTERED}`,
        },
      },
      {
        name: 'a resource with a fragment',
        resources: [`${API}#x`],
        expected: { code: 'invalid_target', status: 400, description: /fragment/ },
      },
      {
        name: 'a scope the client may not have is invalid_scope first',
        scope: 'email',
        resources: [API],
        expected: { code: 'invalid_scope', status: 400 },
      },
    ];
    for (const row of rows) {
      it(row.name, async () => {
        const party = await newClient();
        const request = token(
          party,
          { grant_type: 'client_credentials', ...(row.scope === undefined ? {} : { scope: row.scope }) },
          row.resources,
        );
        if ('code' in row.expected) {
          await expectOAuthError(request, row.expected);
          return;
        }
        const response = await request;
        const claims = await claimsOf(response);
        assert.deepEqual(claims.aud, row.expected.aud);
        assert.equal(claims.scope, row.expected.scope);
        assert.equal(response.scope, row.expected.scope);
      });
    }
  });

  describe('authorization_code and refresh_token', () => {
    let user: User;
    before(async () => {
      user = await addUser(t);
    });

    /** A code for [API, FILES] with scope read write, as /authorize records it. */
    async function codeFor(resources: string[] = [API, FILES]) {
      const party = await newClient();
      const { code, grant } = await seedCode(t, party.client, user, { scope: ['read', 'write'], resources });
      const redeem = (values: string[] = []) =>
        token(party, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT }, values);
      return { party, code, grant, redeem };
    }

    async function storedRefresh(response: TokenResponse) {
      const record = await t.storage.refreshTokens.get(sha256(response.refresh_token ?? ''));
      assert.ok(record, 'the refresh token is stored');
      return record;
    }

    it('gives the token all of the code’s resources by default, and the refresh token keeps them', async () => {
      const { redeem } = await codeFor();
      const response = await redeem();
      assert.deepEqual((await claimsOf(response)).aud, [API, FILES]);
      assert.equal(response.scope, 'read write');
      const record = await storedRefresh(response);
      assert.deepEqual(
        { resources: record.resources, scope: record.scope },
        {
          resources: [API, FILES],
          scope: ['read', 'write'],
        },
      );
    });

    it('narrows the token to one resource and its scope; the refresh token keeps all', async () => {
      const { redeem } = await codeFor();
      const response = await redeem([FILES]);
      const claims = await claimsOf(response);
      assert.equal(claims.aud, FILES);
      assert.equal(claims.scope, 'write');
      assert.deepEqual((await storedRefresh(response)).resources, [API, FILES]);
    });

    for (const [name, codeResources, asked, description] of [
      ['a resource the authorization did not name', [API], [FILES], /not a resource of the authorization/],
      ['a resource when the authorization named none', [], [API], /named no resource/],
      ['an unregistered resource', [API], [UNREGISTERED], /not a resource of the authorization/],
    ] as const) {
      it(`refuses ${name} with invalid_target, leaving the code unused`, async () => {
        const { redeem, code } = await codeFor([...codeResources]);
        await expectOAuthError(redeem([...asked]), { code: 'invalid_target', status: 400, description });
        assert.equal((await t.storage.codes.get(sha256(code)))?.consumedAt, null);
        assert.ok((await redeem()).access_token, 'the code still works');
      });
    }

    it('refuses a resource deleted since the authorization', async () => {
      const gone = 'https://gone.example';
      await t.engine.resources.create({ uri: gone });
      const { redeem } = await codeFor([gone]);
      await t.engine.resources.delete(gone);
      await expectOAuthError(redeem(), {
        code: 'invalid_target',
        status: 400,
        description: /not registered/,
      });
    });

    it('refresh: all of the grant’s resources by default; narrowing applies to that token only', async () => {
      const { party, redeem } = await codeFor();
      const first = await redeem();
      const refresh = (refreshToken: string, values: string[] = [], scope?: string) =>
        token(
          party,
          { grant_type: 'refresh_token', refresh_token: refreshToken, ...(scope ? { scope } : {}) },
          values,
        );
      const narrowed = await refresh(first.refresh_token ?? '', [API]);
      assert.equal((await claimsOf(narrowed)).aud, API);
      assert.equal(narrowed.scope, 'read');
      const kept = await storedRefresh(narrowed);
      assert.deepEqual(
        { resources: kept.resources, scope: kept.scope },
        {
          resources: [API, FILES],
          scope: ['read', 'write'],
        },
      );
      const full = await refresh(narrowed.refresh_token ?? '');
      assert.deepEqual((await claimsOf(full)).aud, [API, FILES]);
      assert.equal(full.scope, 'read write');

      // Widening, or a scope the chosen resource does not offer: refused, the token not spent.
      const current = full.refresh_token ?? '';
      await expectOAuthError(refresh(current, [ANY]), {
        code: 'invalid_target',
        status: 400,
        description: /not a resource of the authorization/,
      });
      await expectOAuthError(refresh(current, [API], 'write'), {
        code: 'invalid_target',
        status: 400,
        description: /do not offer the scope write/,
      });
      assert.equal((await t.storage.refreshTokens.get(sha256(current)))?.retiredAt, null);
    });

    it('password grant: the tokens are for the resource, and the refresh token remembers it', async () => {
      const party = await newClient();
      const response = await token(
        party,
        { grant_type: 'password', username: user.username, password: PASSWORD },
        [FILES],
      );
      assert.equal((await claimsOf(response)).aud, FILES);
      assert.equal(response.scope, 'write');
      assert.deepEqual((await storedRefresh(response)).resources, [FILES]);
    });
  });

  describe('Gatehouse’s own resources refuse tokens for others', () => {
    it('the validator, /userinfo and introspection', async () => {
      const party = await newClient({ scopes: ['read', 'admin'] });
      const forApi = await token(party, { grant_type: 'client_credentials' }, [API]);
      const forBoth = await token(party, { grant_type: 'client_credentials' }, [API, ISSUER]);
      await assert.rejects(
        t.tokens.validator.validate(forApi.access_token),
        (error: unknown) =>
          error instanceof InvalidAccessTokenError && /another resource/.test(error.description),
      );
      assert.ok(
        await t.tokens.validator.validate(forBoth.access_token),
        'one naming the issuer too is accepted',
      );
      await assert.rejects(
        t.userInfo.claims(forApi.access_token),
        (error: unknown) => error instanceof UserInfoError && error.code === 'invalid_token',
      );
      const introspected = await t.tokens.introspector.introspect(
        forBoth.access_token,
        undefined,
        party.client,
      );
      assert.equal(introspected.active, true);
      assert.deepEqual(introspected.aud, [API, ISSUER]);
      assert.equal(
        (await t.tokens.introspector.introspect(forApi.access_token, undefined, party.client)).aud,
        API,
      );

      // Revocation takes a token for any resource; introspection then calls it inactive.
      await t.tokens.revoker.revoke(forApi.access_token, undefined, party.client);
      assert.deepEqual(await t.tokens.introspector.introspect(forApi.access_token, undefined, party.client), {
        active: false,
      });
    });
  });

  describe('the authorization request', () => {
    const path = (client: Client, params: Record<string, string | string[]>) => {
      const query = new URLSearchParams({ client_id: client.id, redirect_uri: REDIRECT });
      if (params.response_type === undefined) query.set('response_type', 'code');
      for (const [name, value] of Object.entries(params)) {
        for (const item of [value].flat()) query.append(name, item);
      }
      return query.toString();
    };

    const rows: {
      name: string;
      params: Record<string, string | string[]>;
      expected: { resources: string[]; scope: string[] } | { error: string; description?: RegExp };
    }[] = [
      {
        name: 'no resource',
        params: { scope: 'read write' },
        expected: { resources: [], scope: ['read', 'write'] },
      },
      {
        name: 'one resource, default scope',
        params: { resource: API },
        expected: { resources: [API], scope: ['read'] },
      },
      {
        name: 'repeated resource is allowed (RFC 8707 §2)',
        params: { resource: [API, FILES], scope: 'read write' },
        expected: { resources: [API, FILES], scope: ['read', 'write'] },
      },
      {
        name: 'an unregistered resource: an error redirect with state',
        params: { resource: UNREGISTERED, state: 'xyz' },
        expected: { error: 'invalid_target', description: /not registered/ },
      },
      {
        name: 'a scope the resource does not offer',
        params: { resource: API, scope: 'write', state: 'xyz' },
        expected: { error: 'invalid_target', description: /do not offer the scope write/ },
      },
      {
        name: 'a resource with a fragment',
        params: { resource: `${API}#top`, state: 'xyz' },
        expected: { error: 'invalid_target', description: /fragment/ },
      },
      {
        name: 'other parameters still may not repeat',
        params: { resource: API, scope: ['read', 'read'], state: 'xyz' },
        expected: { error: 'invalid_request', description: /repeated: scope/ },
      },
    ];
    for (const row of rows) {
      it(row.name, async () => {
        const { client } = await newClient();
        const validation = await t.validateAuthorization(path(client, row.params));
        if ('error' in row.expected) {
          assert.equal(validation.outcome, 'error-redirect');
          if (validation.outcome !== 'error-redirect') return;
          const params = new Map(validation.response.params);
          assert.equal(params.get('error'), row.expected.error);
          assert.match(params.get('error_description') ?? '', row.expected.description ?? /./);
          assert.equal(params.get('state'), 'xyz');
          assert.equal(validation.response.redirectUri, REDIRECT);
          return;
        }
        assert.equal(validation.outcome, 'valid');
        if (validation.outcome !== 'valid') return;
        assert.deepEqual(validation.request.resources, row.expected.resources);
        assert.deepEqual(validation.request.scope, row.expected.scope);
      });
    }

    it('checks the client and redirect URI before the resources: no redirect to an unverified URI', async () => {
      const { client } = await newClient();
      const query = new URLSearchParams({
        response_type: 'code',
        client_id: client.id,
        redirect_uri: 'https://attacker.example/cb',
        resource: UNREGISTERED,
      });
      assert.equal((await t.validateAuthorization(query.toString())).outcome, 'error-page');
    });

    it('records the resources with the code, and issues implicit tokens for them', async () => {
      const { client } = await newClient({ grantTypes: ['authorization_code', 'implicit'] });
      const user = await addUser(t);
      for (const responseType of ['code', 'token']) {
        const validation = await t.validateAuthorization(
          path(client, { response_type: responseType, resource: [API, FILES] }),
        );
        assert.equal(validation.outcome, 'valid');
        if (validation.outcome !== 'valid') return;
        const response = await t.authorization.approve(validation.request, user.id, {
          scope: validation.request.scope,
          lifetime: 3600,
        });
        const params = new Map(response.params);
        if (responseType === 'code') {
          const code = await t.storage.codes.get(sha256(params.get('code') ?? ''));
          assert.deepEqual(code?.resources, [API, FILES]);
        } else {
          assert.deepEqual(decodeJwt(params.get('access_token') ?? '').aud, [API, FILES]);
        }
      }
    });
  });
});

describe('the resource registry', () => {
  let t: TestEngine;
  before(async () => {
    t = await testEngine();
  });
  after(() => t.close());

  it('registers a URI in canonical form, with new scopes registered as clients create --scopes does', async () => {
    const created = await t.engine.resources.create({
      uri: 'HTTPS://Calendar.example/',
      scopes: ['cal:read'],
    });
    assert.deepEqual(created, {
      uri: 'https://calendar.example',
      name: null,
      scopes: ['cal:read'],
      createdAt: created.createdAt,
    });
    assert.equal((await t.engine.scopes.get('cal:read'))?.description, 'Access “cal:read”');
    assert.equal(
      (await t.engine.resources.get('https://calendar.example/'))?.uri,
      'https://calendar.example',
    );
  });

  const refusals: {
    name: string;
    input: { uri: string; scopes?: string[]; name?: string };
    error: new (...args: never[]) => Error;
    field: string;
  }[] = [
    {
      name: 'a URI registered in another spelling',
      input: { uri: 'https://calendar.example:443' },
      error: ConflictError,
      field: 'uri',
    },
    { name: 'the issuer’s own URL', input: { uri: `${ISSUER}/` }, error: ConflictError, field: 'uri' },
    { name: 'a fragment', input: { uri: 'https://x.example/#a' }, error: ValidationError, field: 'uri' },
    {
      name: 'plain http off loopback',
      input: { uri: 'http://x.example' },
      error: ValidationError,
      field: 'uri',
    },
    {
      name: 'a malformed scope',
      input: { uri: 'https://x.example', scopes: ['a"b'] },
      error: ValidationError,
      field: 'scopes',
    },
    {
      name: 'a name with a direction override',
      input: { uri: 'https://x.example', name: 'a\u202eb' },
      error: ValidationError,
      field: 'name',
    },
  ];
  for (const row of refusals) {
    it(`refuses ${row.name}, registering nothing`, async () => {
      const before = await t.engine.resources.list();
      await assert.rejects(
        t.engine.resources.create(row.input),
        (error: unknown) => error instanceof row.error && (error as ValidationError).field === row.field,
      );
      assert.deepEqual(await t.engine.resources.list(), before);
    });
  }

  it('replaces, updates and deletes; an unknown URI is NotFound', async () => {
    const created = await t.engine.resources.create({
      uri: 'https://mail.example',
      name: 'Mail',
      scopes: ['mail'],
    });
    const patched = await t.engine.resources.update(created, { scopes: ['mail', 'mail:send'] });
    assert.deepEqual(
      { name: patched.name, scopes: patched.scopes },
      { name: 'Mail', scopes: ['mail', 'mail:send'] },
    );
    const replaced = await t.engine.resources.replace(patched, {});
    assert.deepEqual({ name: replaced.name, scopes: replaced.scopes }, { name: null, scopes: [] });
    assert.deepEqual(await t.engine.resources.get('https://mail.example'), replaced);
    await t.engine.resources.delete('https://MAIL.example/');
    assert.equal(await t.engine.resources.get('https://mail.example'), undefined);
    await assert.rejects(t.engine.resources.delete('https://mail.example'), NotFoundError);
    await assert.rejects(t.engine.resources.require('not a uri'), NotFoundError);
  });
});
