import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { ACCESS_TOKEN_TYPE } from '../../src/core/token-endpoint/token-exchange.js';
import { TOKEN_EXCHANGE_GRANT, type Client, type Grant, type User } from '../../src/core/model.js';
import type { TokenResponse } from '../../src/core/tokens/token-issuer.js';
import {
  addClient,
  addUser,
  basic,
  expectOAuthError,
  isLive,
  type ExpectedError,
} from '../helpers/fakes/fixtures.js';
import { ISSUER, testEngine, type TestEngine } from '../helpers/fakes/test-engine.js';

const API = 'https://api.example';
const FILES = 'https://files.example/v1';
const UNREGISTERED = 'https://elsewhere.example';

const invalidRequest = (description: RegExp): ExpectedError => ({
  code: 'invalid_request',
  status: 400,
  description,
});

describe('token exchange (RFC 8693)', () => {
  let t: TestEngine;
  let user: User;
  /** The client the subject tokens were issued to (the user's app). */
  let app: Client;
  /** The downstream service that exchanges them. */
  let service: { client: Client; secret: string };

  before(async () => {
    t = await testEngine();
    await t.engine.resources.create({ uri: API, scopes: ['read', 'write'] });
    await t.engine.resources.create({ uri: FILES, scopes: ['files'] });
    user = await addUser(t);
    app = (await addClient(t, { scopes: ['read', 'write', 'files', 'admin'] })).client;
    service = await addClient(t, {
      grantTypes: [TOKEN_EXCHANGE_GRANT],
      redirectUris: [],
      scopes: ['read', 'write', 'files'],
      tokenExchangeTargets: [API, FILES],
    });
  });
  after(() => t.close());

  /** A grant of the user's to the app, and an access token under it, as the issuer makes them. */
  async function subjectToken(
    options: { scope?: string[]; resources?: string[]; grantExpiresAt?: number | null } = {},
  ): Promise<{ token: string; grant: Grant }> {
    const scope = options.scope ?? ['read', 'write', 'files'];
    const grant: Grant = {
      id: randomUUID(),
      clientId: app.id,
      userId: user.id,
      scope,
      createdAt: t.clock.now(),
      expiresAt: options.grantExpiresAt ?? null,
      revokedAt: null,
    };
    await t.storage.grants.insert(grant);
    const response = await t.issuer.issueAccessToken({
      client: app,
      subject: user.id,
      scope,
      resources: options.resources ?? [],
      grant,
      withRefreshToken: false,
    });
    return { token: response.access_token, grant };
  }

  function exchange(
    params: Record<string, string | undefined>,
    extra: { resources?: string[]; audiences?: string[]; party?: { client: Client; secret: string } } = {},
  ): Promise<TokenResponse> {
    const party = extra.party ?? service;
    return t.token({
      authorization: basic(party.client.id, party.secret),
      params: { grant_type: TOKEN_EXCHANGE_GRANT, ...params },
      resources: extra.resources ?? [],
      audiences: extra.audiences ?? [],
    });
  }

  const ofSubject = (token: string) => ({ subject_token: token, subject_token_type: ACCESS_TOKEN_TYPE });

  describe('narrowing', () => {
    const rows: {
      name: string;
      subject?: { scope?: string[]; resources?: string[] };
      scope?: string;
      resources?: string[];
      audiences?: string[];
      expected: { aud: string | string[]; scope: string } | ExpectedError;
    }[] = [
      {
        name: 'by default, all of the subject token: its scope and aud',
        expected: { aud: ISSUER, scope: 'read write files' },
      },
      {
        name: 'the scope the client may have, when the subject token had more',
        subject: { scope: ['read', 'admin'] },
        expected: { aud: ISSUER, scope: 'read' },
      },
      { name: 'a narrower scope', scope: 'read', expected: { aud: ISSUER, scope: 'read' } },
      {
        name: 'a scope the subject token did not have is invalid_scope',
        subject: { scope: ['read'] },
        scope: 'read write',
        expected: { code: 'invalid_scope', status: 400, description: /not in the subject token: write/ },
      },
      {
        name: 'a scope of the subject token the client may not have is invalid_scope',
        subject: { scope: ['read', 'admin'] },
        scope: 'admin',
        expected: { code: 'invalid_scope', status: 400 },
      },
      {
        name: 'a registered resource: the token is for it, with the scope it offers',
        resources: [API],
        expected: { aud: API, scope: 'read write' },
      },
      {
        name: 'an audience naming a registered resource by its URI is that resource',
        audiences: [`${FILES}`],
        scope: 'files',
        expected: { aud: FILES, scope: 'files' },
      },
      {
        name: 'resource and audience together: both',
        resources: [API],
        audiences: [FILES],
        scope: 'read files',
        expected: { aud: [API, FILES], scope: 'read files' },
      },
      {
        name: 'the subject token’s resources by default',
        subject: { resources: [API], scope: ['read'] },
        expected: { aud: API, scope: 'read' },
      },
      {
        name: 'from a token for one resource to another registered one (the next service)',
        subject: { resources: [API] },
        resources: [FILES],
        expected: { aud: FILES, scope: 'files' },
      },
      {
        name: 'a scope the resource does not offer is invalid_target',
        resources: [FILES],
        scope: 'read',
        expected: { code: 'invalid_target', status: 400, description: /do not offer the scope read/ },
      },
      {
        name: 'an unregistered resource is invalid_target',
        resources: [UNREGISTERED],
        expected: { code: 'invalid_target', status: 400, description: /not registered/ },
      },
      {
        name: 'an audience that is no resource URI is invalid_target',
        audiences: ['service-b'],
        expected: { code: 'invalid_target', status: 400 },
      },
      {
        name: 'an audience naming no registered resource is invalid_target',
        audiences: [UNREGISTERED],
        expected: { code: 'invalid_target', status: 400 },
      },
    ];
    for (const row of rows) {
      it(row.name, async () => {
        const { token, grant } = await subjectToken(row.subject);
        const params = { ...ofSubject(token), scope: row.scope };
        const promise = exchange(params, { resources: row.resources, audiences: row.audiences });
        if ('code' in row.expected) {
          await expectOAuthError(promise, row.expected);
          return;
        }
        const response = await promise;
        const claims = decodeJwt(response.access_token);
        assert.deepEqual(claims.aud, row.expected.aud);
        assert.equal(claims.scope, row.expected.scope);
        assert.equal(claims.gid, grant.id);
        assert.equal(claims.sub, user.id);
        assert.equal(claims.client_id, service.client.id);
        assert.equal(response.issued_token_type, ACCESS_TOKEN_TYPE);
        assert.equal(response.token_type, 'bearer');
        assert.equal(response.refresh_token, undefined);
      });
    }
  });

  describe('the targets a client may exchange for (decision 23)', () => {
    const rows: {
      name: string;
      targets: string[];
      subject?: { resources?: string[] };
      resources?: string[];
      audiences?: string[];
      expected: { aud: string | string[] } | ExpectedError;
    }[] = [
      {
        name: 'no targets: the subject token’s own audience, by default',
        targets: [],
        subject: { resources: [API] },
        expected: { aud: API },
      },
      {
        name: 'no targets: the subject token’s own audience, named',
        targets: [],
        subject: { resources: [API] },
        resources: [API],
        expected: { aud: API },
      },
      {
        name: 'no targets: another resource is invalid_target',
        targets: [],
        subject: { resources: [API] },
        resources: [FILES],
        expected: {
          code: 'invalid_target',
          status: 400,
          description: /not among its token exchange targets/,
        },
      },
      {
        name: 'no targets: another resource named as audience is invalid_target',
        targets: [],
        audiences: [API],
        expected: { code: 'invalid_target', status: 400 },
      },
      {
        name: 'a target it is registered for',
        targets: [FILES],
        subject: { resources: [API] },
        audiences: [FILES],
        expected: { aud: FILES },
      },
      {
        name: 'one target of two outside its targets: refused whole',
        targets: [FILES],
        resources: [API, FILES],
        expected: { code: 'invalid_target', status: 400, description: new RegExp(API.replace(/\./g, '\\.')) },
      },
    ];
    for (const row of rows) {
      it(row.name, async () => {
        const party = await addClient(t, {
          grantTypes: [TOKEN_EXCHANGE_GRANT],
          redirectUris: [],
          scopes: ['read', 'write', 'files'],
          tokenExchangeTargets: row.targets,
        });
        const { token } = await subjectToken({ scope: ['read', 'files'], ...row.subject });
        const promise = exchange(ofSubject(token), {
          resources: row.resources,
          audiences: row.audiences,
          party,
        });
        if ('code' in row.expected) {
          await expectOAuthError(promise, row.expected);
          return;
        }
        assert.deepEqual(decodeJwt((await promise).access_token).aud, row.expected.aud);
      });
    }
  });

  describe('may_act (RFC 8693 §4.4)', () => {
    /** A subject token as the issuer makes it, with `may_act`, signed with the server's key. */
    async function withMayAct(mayAct: unknown): Promise<string> {
      const { token } = await subjectToken();
      return t.keyRing.sign({ ...decodeJwt(token), jti: randomUUID(), may_act: mayAct });
    }
    const actorToken = async (): Promise<{ token: string; client: Client }> => {
      const actorClient = (await addClient(t, { scopes: ['read'] })).client;
      const grant: Grant = {
        id: randomUUID(),
        clientId: actorClient.id,
        userId: user.id,
        scope: ['read'],
        createdAt: t.clock.now(),
        expiresAt: null,
        revokedAt: null,
      };
      await t.storage.grants.insert(grant);
      const issued = await t.issuer.issueAccessToken({
        client: actorClient,
        subject: user.id,
        scope: ['read'],
        grant,
        withRefreshToken: false,
      });
      return { token: issued.access_token, client: actorClient };
    };
    const NOT_THIS_ACTOR = invalidRequest(/may_act does not name this actor/);

    const rows: {
      name: string;
      mayAct: (ids: { service: string; actorClient: string; user: string }) => unknown;
      withActor?: boolean;
      expected: 'issued' | ExpectedError;
    }[] = [
      {
        name: 'naming the exchanging client by sub',
        mayAct: (ids) => ({ sub: ids.service }),
        expected: 'issued',
      },
      {
        name: 'naming the exchanging client by client_id',
        mayAct: (ids) => ({ client_id: ids.service }),
        expected: 'issued',
      },
      { name: 'naming another party', mayAct: () => ({ sub: 'someone-else' }), expected: NOT_THIS_ACTOR },
      {
        name: 'naming the client, and a claim Gatehouse cannot tell of it',
        mayAct: (ids) => ({ sub: ids.service, iss: 'https://other.example' }),
        expected: NOT_THIS_ACTOR,
      },
      {
        name: 'with an actor token: its subject and client',
        mayAct: (ids) => ({ sub: ids.user, client_id: ids.actorClient }),
        withActor: true,
        expected: 'issued',
      },
      {
        name: 'with an actor token: the exchanging client is not the actor',
        mayAct: (ids) => ({ sub: ids.service }),
        withActor: true,
        expected: NOT_THIS_ACTOR,
      },
      {
        name: 'an empty may_act is a malformed token',
        mayAct: () => ({}),
        expected: invalidRequest(/subject_token: the access token has malformed claims/),
      },
      {
        name: 'a may_act that is no object is a malformed token',
        mayAct: () => 'service',
        expected: invalidRequest(/malformed claims/),
      },
    ];
    for (const row of rows) {
      it(row.name, async () => {
        const actor = await actorToken();
        const subject = await withMayAct(
          row.mayAct({ service: service.client.id, actorClient: actor.client.id, user: user.id }),
        );
        const params = {
          ...ofSubject(subject),
          ...(row.withActor ? { actor_token: actor.token, actor_token_type: ACCESS_TOKEN_TYPE } : {}),
        };
        if (row.expected === 'issued') {
          const response = await exchange(params);
          assert.equal(decodeJwt(response.access_token).sub, user.id);
          return;
        }
        await expectOAuthError(exchange(params), row.expected);
      });
    }
  });

  describe('refused requests', () => {
    const rows: {
      name: string;
      params: (subject: string) => Record<string, string | undefined>;
      expected: ExpectedError;
    }[] = [
      {
        name: 'no subject_token',
        params: () => ({ subject_token_type: ACCESS_TOKEN_TYPE }),
        expected: invalidRequest(/subject_token is required/),
      },
      {
        name: 'no subject_token_type',
        params: (s) => ({ subject_token: s }),
        expected: invalidRequest(/subject_token_type is required/),
      },
      {
        name: 'a subject_token_type other than access_token',
        params: (s) => ({
          subject_token: s,
          subject_token_type: 'urn:ietf:params:oauth:token-type:id_token',
        }),
        expected: invalidRequest(/subject_token_type not supported/),
      },
      {
        name: 'a requested_token_type other than access_token',
        params: (s) => ({
          ...ofSubject(s),
          requested_token_type: 'urn:ietf:params:oauth:token-type:refresh_token',
        }),
        expected: invalidRequest(/requested_token_type not supported/),
      },
      {
        name: 'a subject token that is not one of this server’s',
        params: () => ofSubject('eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.c2ln'),
        expected: invalidRequest(/^subject_token: /),
      },
      {
        name: 'actor_token_type without actor_token',
        params: (s) => ({ ...ofSubject(s), actor_token_type: ACCESS_TOKEN_TYPE }),
        expected: invalidRequest(/actor_token_type was sent without actor_token/),
      },
      {
        name: 'actor_token without actor_token_type',
        params: (s) => ({ ...ofSubject(s), actor_token: s }),
        expected: invalidRequest(/actor_token_type is required/),
      },
      {
        name: 'an actor token that is not valid',
        params: (s) => ({ ...ofSubject(s), actor_token: 'not-a-token', actor_token_type: ACCESS_TOKEN_TYPE }),
        expected: invalidRequest(/^actor_token: the access token is malformed/),
      },
    ];
    for (const row of rows) {
      it(`${row.name}: invalid_request`, async () => {
        const { token } = await subjectToken();
        const error = await expectOAuthError(exchange(row.params(token)), row.expected);
        assert.ok(!error.description.includes(token), 'the token is never echoed');
      });
    }

    it('a subject token whose grant was revoked', async () => {
      const { token, grant } = await subjectToken();
      await t.storage.grants.revoke(grant.id, t.clock.now());
      await expectOAuthError(
        exchange(ofSubject(token)),
        invalidRequest(/grant behind the access token was revoked/),
      );
    });

    it('a revoked subject token', async () => {
      const { token } = await subjectToken();
      const { jti, exp } = decodeJwt(token);
      await t.storage.revocations.revokeAccessToken(jti as string, exp as number);
      await expectOAuthError(exchange(ofSubject(token)), invalidRequest(/access token was revoked/));
    });

    it('an expired subject token', async () => {
      const clock = t.clock;
      const { token } = await subjectToken();
      clock.advance(t.config.accessTokenTtl + 1);
      try {
        await expectOAuthError(exchange(ofSubject(token)), invalidRequest(/has expired/));
      } finally {
        clock.advance(-(t.config.accessTokenTtl + 1));
      }
    });

    it('a client_credentials token (no grant) as the subject', async () => {
      const machine = await addClient(t, { grantTypes: ['client_credentials'], redirectUris: [] });
      const own = await t.token({
        authorization: basic(machine.client.id, machine.secret),
        params: { grant_type: 'client_credentials' },
      });
      await expectOAuthError(exchange(ofSubject(own.access_token)), invalidRequest(/user’s grant/));
    });

    it('a client not registered for token exchange: unauthorized_client', async () => {
      const { token } = await subjectToken();
      const other = await addClient(t, { grantTypes: ['authorization_code'] });
      await expectOAuthError(exchange(ofSubject(token), { party: other }), {
        code: 'unauthorized_client',
        status: 400,
      });
    });

    it('a public client: unauthorized_client', async () => {
      const { token } = await subjectToken();
      const pub = await addClient(t, { isPublic: true, grantTypes: [TOKEN_EXCHANGE_GRANT] });
      await expectOAuthError(
        t.token({
          authorization: undefined,
          params: { grant_type: TOKEN_EXCHANGE_GRANT, client_id: pub.client.id, ...ofSubject(token) },
        }),
        { code: 'unauthorized_client', status: 400 },
      );
    });

    it('the client registry refuses token exchange for a public client', async () => {
      await assert.rejects(
        t.engine.clients.create({
          name: 'spa',
          redirect_uris: [],
          grant_types: [TOKEN_EXCHANGE_GRANT],
          public: true,
        }),
        /public client cannot use token exchange/,
      );
    });
  });

  describe('the acting party (RFC 8693 §4.1)', () => {
    it('without an actor token, the client acts', async () => {
      const { token } = await subjectToken();
      const claims = decodeJwt((await exchange(ofSubject(token))).access_token);
      assert.deepEqual(claims.act, { sub: service.client.id });
    });

    it('an actor token’s subject and client act; a second exchange nests the first actor', async () => {
      const { token } = await subjectToken();
      const { token: actorToken } = await subjectToken();
      const first = await exchange({
        ...ofSubject(token),
        actor_token: actorToken,
        actor_token_type: ACCESS_TOKEN_TYPE,
      });
      assert.deepEqual(decodeJwt(first.access_token).act, { sub: user.id, client_id: app.id });
      const second = await exchange(ofSubject(first.access_token));
      assert.deepEqual(decodeJwt(second.access_token).act, {
        sub: service.client.id,
        act: { sub: user.id, client_id: app.id },
      });
      const introspected = await t.tokens.introspector.introspect(
        second.access_token,
        undefined,
        service.client,
      );
      assert.equal(introspected.active, true);
      assert.deepEqual(introspected.act, decodeJwt(second.access_token).act);
    });

    it('refuses a chain longer than 8 actors', async () => {
      let { token } = await subjectToken();
      for (let depth = 1; depth <= 8; depth += 1) token = (await exchange(ofSubject(token))).access_token;
      await expectOAuthError(exchange(ofSubject(token)), invalidRequest(/longer than 8 actors/));
    });
  });

  describe('lifetime', () => {
    it('expires no later than the subject token', async () => {
      const { token } = await subjectToken();
      const subjectExp = decodeJwt(token).exp as number;
      t.clock.advance(600);
      try {
        const response = await exchange(ofSubject(token));
        assert.equal(decodeJwt(response.access_token).exp, subjectExp);
        assert.equal(response.expires_in, subjectExp - t.clock.now());
      } finally {
        t.clock.advance(-600);
      }
    });

    it('expires no later than the grant', async () => {
      const grantExpiresAt = t.clock.now() + 120;
      const { token } = await subjectToken({ grantExpiresAt });
      const response = await exchange(ofSubject(token));
      assert.equal(decodeJwt(response.access_token).exp, grantExpiresAt);
    });

    it('dies when the subject’s grant is revoked', async () => {
      const { token, grant } = await subjectToken();
      const exchanged = (await exchange(ofSubject(token))).access_token;
      assert.equal(await isLive(t, exchanged), true);
      await t.storage.grants.revoke(grant.id, t.clock.now());
      assert.equal(await isLive(t, exchanged), false);
      const introspected = await t.tokens.introspector.introspect(exchanged, undefined, service.client);
      assert.deepEqual(introspected, { active: false });
    });
  });

  it('dies when the exchanging client is deleted, though the grant is another client’s', async () => {
    const { token } = await subjectToken();
    const doomed = await addClient(t, { grantTypes: [TOKEN_EXCHANGE_GRANT], redirectUris: [] });
    const exchanged = (await exchange(ofSubject(token), { party: doomed })).access_token;
    assert.equal(await isLive(t, exchanged), true);
    await t.storage.clients.delete(doomed.client.id);
    assert.equal(await isLive(t, exchanged), false);
    assert.equal(await isLive(t, token), true, 'the subject token lives on');
  });

  it('is advertised among the token endpoint’s grant types', () => {
    assert.ok(t.tokenEndpoint.grantTypes.includes(TOKEN_EXCHANGE_GRANT));
  });
});
