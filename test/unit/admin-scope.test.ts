import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { adminOnly, scopeForUser } from '../../src/core/scopes/admin-scope.js';
import { ACCESS_TOKEN_TYPE } from '../../src/core/token-endpoint/token-exchange.js';
import {
  DEVICE_CODE_GRANT_TYPE,
  TOKEN_EXCHANGE_GRANT,
  type Client,
  type Grant,
  type User,
} from '../../src/core/model.js';
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
import { START, testEngine, type TestEngine } from '../helpers/fakes/test-engine.js';

/**
 * docs/decisions.md, decision 29: a token issued for a user carries `admin` only while the user is an
 * administrator, at every place scope is granted for a user; a client's own (client_credentials)
 * stays the client's. Each grant is asked for `read admin` by a client registered with both.
 */
const SCOPES = ['read', 'admin'];
const INVALID_SCOPE: ExpectedError = { code: 'invalid_scope', status: 400, description: /administrators/ };

describe('scopeForUser (decision 29)', () => {
  const rows: { name: string; scope: string[]; admin: boolean | undefined; expected: string[] }[] = [
    {
      name: 'an administrator keeps admin',
      scope: ['read', 'admin'],
      admin: true,
      expected: ['read', 'admin'],
    },
    { name: 'anyone else loses it', scope: ['read', 'admin'], admin: false, expected: ['read'] },
    {
      name: 'a user who no longer exists loses it',
      scope: ['admin', 'read'],
      admin: undefined,
      expected: ['read'],
    },
    {
      name: 'other scopes are untouched',
      scope: ['read', 'write'],
      admin: false,
      expected: ['read', 'write'],
    },
  ];
  for (const row of rows) {
    it(row.name, () => {
      assert.deepEqual(
        scopeForUser(row.scope, row.admin === undefined ? undefined : { admin: row.admin }),
        row.expected,
      );
    });
  }
});

interface World {
  t: TestEngine;
  client: Client;
  secret: string;
  user: User;
}

async function world(admin: boolean, client: Partial<Client> = {}): Promise<World> {
  const t = await testEngine();
  const { client: registered, secret } = await addClient(t, {
    grantTypes: ['authorization_code', 'implicit', 'refresh_token', 'password', DEVICE_CODE_GRANT_TYPE],
    scopes: SCOPES,
    ...client,
  });
  const user = await addUser(t);
  if (admin) await t.storage.users.update({ ...user, admin: true });
  return { t, client: registered, secret, user: { ...user, admin } };
}

const setAdmin = (w: World, admin: boolean) => w.t.storage.users.update({ ...w.user, admin });

/** One way of getting a token for the user, asked for `scope`: the scope it was issued with. */
type Issue = (w: World, scope: string) => Promise<string>;

const byPassword: Issue = async (w, scope) => {
  const response = await w.t.token({
    authorization: basic(w.client.id, w.secret),
    params: { grant_type: 'password', username: w.user.username, password: PASSWORD, scope },
  });
  return response.scope ?? '';
};

/** A code the user consented to while an administrator; the role as it is when it is redeemed. */
const byCode: Issue = async (w, scope) => {
  const { code } = await seedCode(w.t, w.client, w.user, { scope: scope.split(' ') });
  const response = await w.t.token({
    authorization: basic(w.client.id, w.secret),
    params: { grant_type: 'authorization_code', code, redirect_uri: REDIRECT },
  });
  return String(decodeJwt(response.access_token).scope);
};

/** A refresh token under a grant of `scope`. */
const byRefresh: Issue = async (w, scope) => {
  const { code } = await seedCode(w.t, w.client, w.user, { scope: scope.split(' ') });
  const first = await w.t
    .token({
      authorization: basic(w.client.id, w.secret),
      params: { grant_type: 'authorization_code', code, redirect_uri: REDIRECT },
    })
    .catch(async () => {
      // The code grant itself refuses an admin-only code for a non-administrator: make the refresh
      // token as an earlier, wider consent left it.
      const admin = w.user.admin;
      await setAdmin(w, true);
      const { code: again } = await seedCode(w.t, w.client, w.user, { scope: scope.split(' ') });
      const response = await w.t.token({
        authorization: basic(w.client.id, w.secret),
        params: { grant_type: 'authorization_code', code: again, redirect_uri: REDIRECT },
      });
      await setAdmin(w, admin);
      return response;
    });
  const response = await w.t.token({
    authorization: basic(w.client.id, w.secret),
    params: { grant_type: 'refresh_token', refresh_token: first.refresh_token },
  });
  return response.scope ?? '';
};

/** The device grant: the consent page's request for the signed-in user, approved as it stands. */
const byDevice: Issue = async (w, scope) => {
  const device = w.t.engine.deviceAuthorization;
  const started = await device.start(w.client, { scope, resources: [] });
  const found = await device.find(started.user_code, w.user);
  assert.equal(found.outcome, 'pending');
  if (found.outcome !== 'pending') return '';
  const answer = await device.approve(
    started.user_code,
    { userId: w.user.id },
    { scope: found.request.scope, lifetime: 3600 },
  );
  if (answer === 'refused') {
    // Nothing offered: the device is told no (RFC 8628 §3.5 access_denied); the row expects invalid_scope.
    assert.deepEqual(found.request.scope, []);
    await expectOAuthError(
      w.t.token({
        authorization: basic(w.client.id, w.secret),
        params: { grant_type: DEVICE_CODE_GRANT_TYPE, device_code: started.device_code },
      }),
      { code: 'access_denied', status: 400 },
    );
    throw adminOnly();
  }
  assert.equal(answer, 'approved');
  const response = await w.t.token({
    authorization: basic(w.client.id, w.secret),
    params: { grant_type: DEVICE_CODE_GRANT_TYPE, device_code: started.device_code },
  });
  return response.scope ?? '';
};

/** The authorization endpoint: the consent step's request, allowed in full, answered with a token. */
const byImplicit: Issue = async (w, scope) => {
  const validation = await w.t.validateAuthorization(
    new URLSearchParams({
      response_type: 'token',
      client_id: w.client.id,
      redirect_uri: REDIRECT,
      scope,
      state: 's',
    }).toString(),
  );
  assert.equal(validation.outcome, 'valid');
  if (validation.outcome !== 'valid') return '';
  const next = await w.t.authorization.next(validation.request, { userId: w.user.id });
  const error = (params: [string, string][]) => params.find(([name]) => name === 'error')?.[1];
  if (next.step === 'respond') {
    assert.equal(error(next.response.params), 'invalid_scope');
    throw adminOnly();
  }
  assert.equal(next.step, 'consent');
  if (next.step !== 'consent') return '';
  const response = await w.t.authorization.approve(next.request, w.user.id, {
    scope: next.request.scope,
    lifetime: 3600,
  });
  return new Map(response.params).get('scope') ?? '';
};

/**
 * Token exchange of a user's token that carries `scope` (issued while the user was an
 * administrator), for all of it the exchanging client may have (no `scope` parameter).
 */
const byExchange: Issue = async (w, scope) => {
  const grant: Grant = {
    id: randomUUID(),
    clientId: w.client.id,
    userId: w.user.id,
    scope: scope.split(' '),
    createdAt: START,
    expiresAt: null,
    revokedAt: null,
  };
  await w.t.storage.grants.insert(grant);
  const subject = await w.t.issuer.issueAccessToken({
    client: w.client,
    subject: w.user.id,
    scope: scope.split(' '),
    grant,
    withRefreshToken: false,
  });
  const service = await addClient(w.t, {
    grantTypes: [TOKEN_EXCHANGE_GRANT],
    redirectUris: [],
    scopes: SCOPES,
  });
  const response = await w.t.token({
    authorization: basic(service.client.id, service.secret),
    params: {
      grant_type: TOKEN_EXCHANGE_GRANT,
      subject_token: subject.access_token,
      subject_token_type: ACCESS_TOKEN_TYPE,
    },
  });
  return response.scope ?? '';
};

const GRANTS: [string, Issue][] = [
  ['password grant', byPassword],
  ['authorization code (the role lost since the consent)', byCode],
  ['refresh token (a grant made before the role was lost)', byRefresh],
  ['device grant (consent page and approval)', byDevice],
  ['authorization endpoint (consent, implicit)', byImplicit],
  ['token exchange of a user’s token', byExchange],
];

describe('the admin scope of a token issued for a user, per grant (decision 29)', () => {
  const rows: { who: string; admin: boolean; scope: string; expected: string | ExpectedError }[] = [
    { who: 'an administrator', admin: true, scope: 'read admin', expected: 'read admin' },
    { who: 'an ordinary user', admin: false, scope: 'read admin', expected: 'read' },
    { who: 'an ordinary user asking only for admin', admin: false, scope: 'admin', expected: INVALID_SCOPE },
    { who: 'an ordinary user not asking for admin', admin: false, scope: 'read', expected: 'read' },
  ];
  for (const [grant, issue] of GRANTS) {
    for (const row of rows) {
      it(`${grant}: ${row.who}`, async () => {
        const w = await world(row.admin);
        try {
          if (typeof row.expected === 'string') assert.equal(await issue(w, row.scope), row.expected);
          else await expectOAuthError(issue(w, row.scope), row.expected);
        } finally {
          await w.t.close();
        }
      });
    }
  }

  it('a refresh token of an administrator who lost the role mints no admin, even once it is given back', async () => {
    const w = await world(true);
    try {
      const { code } = await seedCode(w.t, w.client, w.user, { scope: SCOPES });
      const auth = basic(w.client.id, w.secret);
      const first = await w.t.token({
        authorization: auth,
        params: { grant_type: 'authorization_code', code, redirect_uri: REDIRECT },
      });
      assert.equal(decodeJwt(first.access_token).scope, 'read admin');
      await setAdmin(w, false);
      const refresh = (token: string | undefined, scope?: string) =>
        w.t.token({
          authorization: auth,
          params: { grant_type: 'refresh_token', refresh_token: token, scope },
        });
      await expectOAuthError(refresh(first.refresh_token, 'admin'), { code: 'invalid_scope', status: 400 });
      const second = await refresh(first.refresh_token);
      assert.equal(second.scope, 'read');
      await setAdmin(w, true);
      assert.equal((await refresh(second.refresh_token)).scope, 'read');
    } finally {
      await w.t.close();
    }
  });

  it('token exchange: asking for admin of a user who is no administrator is invalid_scope', async () => {
    const w = await world(false);
    try {
      const grant: Grant = {
        id: randomUUID(),
        clientId: w.client.id,
        userId: w.user.id,
        scope: SCOPES,
        createdAt: START,
        expiresAt: null,
        revokedAt: null,
      };
      await w.t.storage.grants.insert(grant);
      const subject = await w.t.issuer.issueAccessToken({
        client: w.client,
        subject: w.user.id,
        scope: SCOPES,
        grant,
        withRefreshToken: false,
      });
      const service = await addClient(w.t, {
        grantTypes: [TOKEN_EXCHANGE_GRANT],
        redirectUris: [],
        scopes: SCOPES,
      });
      const exchange = w.t.token({
        authorization: basic(service.client.id, service.secret),
        params: {
          grant_type: TOKEN_EXCHANGE_GRANT,
          subject_token: subject.access_token,
          subject_token_type: ACCESS_TOKEN_TYPE,
          scope: 'read admin',
        },
      });
      await expectOAuthError(exchange, INVALID_SCOPE);
    } finally {
      await w.t.close();
    }
  });

  it('client_credentials: a client’s own admin does not depend on any user', async () => {
    const t = await testEngine();
    try {
      const { client, secret } = await addClient(t, {
        grantTypes: ['client_credentials'],
        redirectUris: [],
        scopes: SCOPES,
      });
      const response = await t.token({
        authorization: basic(client.id, secret),
        params: { grant_type: 'client_credentials', scope: 'admin' },
      });
      assert.equal(response.scope, 'admin');
    } finally {
      await t.close();
    }
  });
});
