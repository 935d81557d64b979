import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { responseLocation, type AuthorizationResponse } from '../../src/core/authorize/response.js';
import {
  ACR_MULTI_FACTOR as MFA,
  ACR_PHISHING_RESISTANT as PHR,
  ACR_SINGLE_FACTOR as SF,
  NO_REQUIREMENT,
  reportedAcr,
  satisfies,
  unsatisfied,
  type Authentication,
  type AuthenticationRequirement,
  type Unsatisfied,
} from '../../src/core/sign-in/assurance.js';
import type { AmrValue } from '../../src/core/sign-in/methods.js';
import { TOKEN_EXCHANGE_GRANT } from '../../src/core/model.js';
import { ACCESS_TOKEN_TYPE } from '../../src/core/token-endpoint/token-exchange.js';
import {
  addClient,
  addUser,
  basic,
  liveClaims,
  pkcePair,
  REDIRECT,
  withBasic,
} from '../helpers/fakes/fixtures.js';
import { START, testEngine, type TestEngine } from '../helpers/fakes/test-engine.js';

// Decision 36: what a request asks of the sign-in (acr_values, the claims parameter's acr, max_age),
// whether a session satisfies it, the authorization step that asks for a new sign-in, and what the
// tokens of the answer report (ID token amr/acr; access tokens and introspection acr/auth_time).

const NOW = START;

const requirement = (fields: Partial<AuthenticationRequirement>): AuthenticationRequirement => ({
  ...NO_REQUIREMENT,
  ...fields,
});

describe('the satisfaction rule (sign-in/assurance.ts unsatisfied, satisfies)', () => {
  const rows: {
    name: string;
    acr: string | undefined;
    ago: number;
    asked: Partial<AuthenticationRequirement>;
    expected: Unsatisfied | undefined;
  }[] = [
    { name: 'nothing asked', acr: SF, ago: 10_000, asked: {}, expected: undefined },
    {
      name: 'single-factor for single-factor',
      acr: SF,
      ago: 0,
      asked: { acrValues: [SF] },
      expected: undefined,
    },
    { name: 'single-factor for multi-factor', acr: SF, ago: 0, asked: { acrValues: [MFA] }, expected: 'acr' },
    { name: 'single-factor for phr', acr: SF, ago: 0, asked: { acrValues: [PHR] }, expected: 'acr' },
    {
      name: 'multi-factor for multi-factor',
      acr: MFA,
      ago: 0,
      asked: { acrValues: [MFA] },
      expected: undefined,
    },
    { name: 'multi-factor for phr', acr: MFA, ago: 0, asked: { acrValues: [PHR] }, expected: 'acr' },
    {
      name: 'phr for multi-factor (stronger will do)',
      acr: PHR,
      ago: 0,
      asked: { acrValues: [MFA] },
      expected: undefined,
    },
    { name: 'phr for single-factor', acr: PHR, ago: 0, asked: { acrValues: [SF] }, expected: undefined },
    {
      name: 'any one of a list: the weakest known decides',
      acr: MFA,
      ago: 0,
      asked: { acrValues: [PHR, MFA] },
      expected: undefined,
    },
    {
      name: 'unknown values are left out of the list',
      acr: SF,
      ago: 0,
      asked: { acrValues: ['urn:other:gold', MFA] },
      expected: 'acr',
    },
    {
      name: 'only unknown values: nothing this server can check',
      acr: SF,
      ago: 0,
      asked: { acrValues: ['1', '2'] },
      expected: undefined,
    },
    {
      name: 'a sign-in without acr is weaker than any',
      acr: undefined,
      ago: 0,
      asked: { acrValues: [SF] },
      expected: 'acr',
    },
    { name: 'within max_age', acr: SF, ago: 60, asked: { maxAge: 60 }, expected: undefined },
    { name: 'older than max_age', acr: SF, ago: 61, asked: { maxAge: 60 }, expected: 'max-age' },
    { name: 'max_age=0, just now', acr: SF, ago: 0, asked: { maxAge: 0 }, expected: undefined },
    {
      name: 'too old and too weak: max_age is said first',
      acr: SF,
      ago: 61,
      asked: { maxAge: 60, acrValues: [MFA] },
      expected: 'max-age',
    },
    {
      name: 'the essential flag does not change the rule',
      acr: SF,
      ago: 0,
      asked: { acrValues: [MFA], essential: true },
      expected: 'acr',
    },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const authentication = { authTime: NOW - row.ago, acr: row.acr };
      assert.equal(unsatisfied(authentication, requirement(row.asked), NOW), row.expected);
      assert.equal(satisfies(authentication, requirement(row.asked), NOW), row.expected === undefined);
    });
  }
});

describe('the acr reported (reportedAcr): of the values asked, the strongest reached; never more than what happened', () => {
  const rows: { name: string; acr: string; asked: string[]; expected: string }[] = [
    { name: 'nothing asked: the sign-in’s own', acr: PHR, asked: [], expected: PHR },
    { name: 'phr asked for multi-factor: multi-factor', acr: PHR, asked: [MFA], expected: MFA },
    { name: 'phr asked for either: phr', acr: PHR, asked: [MFA, PHR], expected: PHR },
    { name: 'multi-factor asked for either: multi-factor', acr: MFA, asked: [PHR, MFA], expected: MFA },
    {
      name: 'single-factor asked for multi-factor: its own (voluntary, unmet)',
      acr: SF,
      asked: [MFA],
      expected: SF,
    },
    { name: 'unknown values asked: its own', acr: MFA, asked: ['1', '2'], expected: MFA },
  ];
  for (const row of rows) {
    it(row.name, () => {
      assert.equal(reportedAcr(row.acr, requirement({ acrValues: row.asked })), row.expected);
    });
  }
});

type Query = Record<string, string>;

const code = (extra: Query = {}): Query => ({
  client_id: 'rp',
  redirect_uri: REDIRECT,
  state: 's',
  response_type: 'code',
  scope: 'openid',
  ...extra,
});

const essential = (values: string[]) => JSON.stringify({ id_token: { acr: { essential: true, values } } });

describe('reading acr_values, claims and max_age (request step authentication-requirements)', () => {
  const rows: {
    name: string;
    query: Query;
    expected: AuthenticationRequirement | { error: string; description: string };
  }[] = [
    { name: 'nothing asked', query: code(), expected: NO_REQUIREMENT },
    {
      name: 'acr_values: voluntary, every value as sent',
      query: code({ acr_values: `${MFA} ${PHR}` }),
      expected: { acrValues: [MFA, PHR], essential: false, maxAge: null },
    },
    {
      name: 'claims with an essential acr',
      query: code({ claims: essential([PHR]), max_age: '30' }),
      expected: { acrValues: [PHR], essential: true, maxAge: 30 },
    },
    {
      name: 'claims with an essential acr value',
      query: code({ claims: JSON.stringify({ id_token: { acr: { essential: true, value: MFA } } }) }),
      expected: { acrValues: [MFA], essential: true, maxAge: null },
    },
    {
      name: 'an essential acr takes the place of acr_values',
      query: code({ acr_values: SF, claims: essential([MFA]) }),
      expected: { acrValues: [MFA], essential: true, maxAge: null },
    },
    {
      name: 'a voluntary acr in claims yields to acr_values',
      query: code({ acr_values: SF, claims: JSON.stringify({ id_token: { acr: { values: [MFA] } } }) }),
      expected: { acrValues: [SF], essential: false, maxAge: null },
    },
    {
      name: 'claims asking other claims only, or acr null: nothing to meet',
      query: code({
        claims: JSON.stringify({ id_token: { acr: null, email: { essential: true } }, userinfo: {} }),
      }),
      expected: NO_REQUIREMENT,
    },
    {
      name: 'an essential acr without values asks nothing more',
      query: code({ claims: JSON.stringify({ id_token: { acr: { essential: true } } }) }),
      expected: NO_REQUIREMENT,
    },
    {
      name: 'OAuth 2.0 (RFC 9470 §4): acr_values and max_age read, claims not',
      query: {
        client_id: 'conf',
        response_type: 'code',
        scope: 'read',
        acr_values: MFA,
        max_age: '5',
        claims: '{',
      },
      expected: { acrValues: [MFA], essential: false, maxAge: 5 },
    },
    {
      name: 'OAuth 2.0: a malformed max_age is ignored, as before',
      query: { client_id: 'conf', response_type: 'code', scope: 'read', max_age: 'x' },
      expected: NO_REQUIREMENT,
    },
    {
      name: 'claims that is no JSON',
      query: code({ claims: '{id_token' }),
      expected: { error: 'invalid_request', description: 'claims is not a JSON object' },
    },
    {
      name: 'claims that is a JSON array',
      query: code({ claims: '[]' }),
      expected: { error: 'invalid_request', description: 'claims is not a JSON object' },
    },
    {
      name: 'an acr that is not an object',
      query: code({ claims: JSON.stringify({ id_token: { acr: 'phr' } }) }),
      expected: { error: 'invalid_request', description: 'claims.id_token.acr is not a JSON object or null' },
    },
    {
      name: 'acr values that are not strings',
      query: code({ claims: JSON.stringify({ id_token: { acr: { values: [1] } } }) }),
      expected: {
        error: 'invalid_request',
        description: 'claims.id_token.acr.values is not an array of strings',
      },
    },
    {
      name: 'too many acr_values',
      query: code({ acr_values: Array.from({ length: 17 }, (_, i) => `v${i}`).join(' ') }),
      expected: {
        error: 'invalid_request',
        description: 'acr_values takes at most 16 values of 256 characters',
      },
    },
  ];
  for (const row of rows) {
    it(row.name, async () => {
      const { engine } = await fixture();
      try {
        const validation = await engine.validateAuthorization(new URLSearchParams(row.query).toString());
        if ('error' in row.expected) {
          assert.equal(validation.outcome, 'error-redirect', JSON.stringify(validation));
          if (validation.outcome !== 'error-redirect') return;
          const params = new URL(responseLocation(validation.response)).searchParams;
          assert.equal(params.get('error'), row.expected.error);
          assert.equal(params.get('error_description'), row.expected.description);
          return;
        }
        assert.equal(validation.outcome, 'valid', JSON.stringify(validation));
        if (validation.outcome !== 'valid') return;
        assert.deepEqual(validation.request.authenticationRequirement, row.expected);
        assert.equal(validation.request.maxAge, row.expected.maxAge);
      } finally {
        await engine.close();
      }
    });
  }
});

async function fixture(): Promise<{
  engine: TestEngine;
  secret: string;
  user: Awaited<ReturnType<typeof addUser>>;
}> {
  const engine = await testEngine();
  const { secret } = await addClient(engine, {
    id: 'rp',
    scopes: ['openid', 'profile', 'read', 'offline_access'],
    grantTypes: ['authorization_code', 'refresh_token'],
  });
  await addClient(engine, { id: 'conf', scopes: ['read'], secret });
  const user = await addUser(engine);
  return { engine, secret, user };
}

const AMR: Record<string, AmrValue[]> = {
  [SF]: ['pwd'],
  [MFA]: ['pwd', 'otp', 'mfa'],
  [PHR]: ['hwk', 'user'],
};

/** What next() should do: a sign-in (with its reason and the acr named), or an answer (error or not). */
type Expected =
  | { signIn: 'login' | 'max-age' | 'acr'; acr?: string }
  | { error: string }
  | { consent: true }
  | { answered: true; acr: string };

interface StepRow {
  name: string;
  query: Query;
  session: { acr: string; ago: number };
  interacted?: boolean;
  /** A grant covering the request, so that prompt=none can be answered. */
  allowed?: boolean;
  expected: Expected;
}

const STEPS: StepRow[] = [
  {
    name: 'acr_values met: on to consent',
    query: code({ acr_values: MFA }),
    session: { acr: MFA, ago: 5 },
    expected: { consent: true },
  },
  {
    name: 'acr_values above the sign-in: a new sign-in, naming the weakest value asked',
    query: code({ acr_values: `${PHR} ${MFA}` }),
    session: { acr: SF, ago: 5 },
    expected: { signIn: 'acr', acr: MFA },
  },
  {
    name: 'acr_values unmet after signing in again: answered with the acr reached (voluntary)',
    query: code({ acr_values: MFA }),
    session: { acr: SF, ago: 0 },
    interacted: true,
    allowed: true,
    expected: { answered: true, acr: SF },
  },
  {
    name: 'an essential acr above the sign-in: a new sign-in',
    query: code({ claims: essential([PHR]) }),
    session: { acr: MFA, ago: 5 },
    expected: { signIn: 'acr', acr: PHR },
  },
  {
    name: 'an essential acr unmet after signing in again: unmet_authentication_requirements',
    query: code({ claims: essential([PHR]) }),
    session: { acr: MFA, ago: 0 },
    interacted: true,
    expected: { error: 'unmet_authentication_requirements' },
  },
  {
    name: 'an essential acr met by a stronger sign-in: the value asked is reported',
    query: code({ claims: essential([MFA]) }),
    session: { acr: PHR, ago: 5 },
    allowed: true,
    expected: { answered: true, acr: MFA },
  },
  {
    name: 'an essential acr of values no sign-in here gives: unmet at once, no sign-in in vain',
    query: code({ claims: essential(['urn:other:gold']) }),
    session: { acr: PHR, ago: 5 },
    expected: { error: 'unmet_authentication_requirements' },
  },
  {
    name: 'max_age passed: a new sign-in (reason max-age)',
    query: code({ max_age: '60' }),
    session: { acr: SF, ago: 61 },
    expected: { signIn: 'max-age' },
  },
  {
    name: 'max_age and acr both short: max-age first',
    query: code({ max_age: '60', acr_values: MFA }),
    session: { acr: SF, ago: 61 },
    expected: { signIn: 'max-age' },
  },
  {
    name: 'prompt=none, essential acr unmet: login_required',
    query: code({ prompt: 'none', claims: essential([MFA]) }),
    session: { acr: SF, ago: 5 },
    allowed: true,
    expected: { error: 'login_required' },
  },
  {
    name: 'prompt=none, voluntary acr unmet: answered with the acr reached',
    query: code({ prompt: 'none', acr_values: MFA }),
    session: { acr: SF, ago: 5 },
    allowed: true,
    expected: { answered: true, acr: SF },
  },
  {
    name: 'prompt=none, max_age passed: login_required',
    query: code({ prompt: 'none', max_age: '60', acr_values: SF }),
    session: { acr: PHR, ago: 61 },
    allowed: true,
    expected: { error: 'login_required' },
  },
  {
    name: 'OAuth 2.0 (RFC 9470 §4): acr_values make the user step up too',
    query: {
      client_id: 'conf',
      redirect_uri: REDIRECT,
      response_type: 'code',
      scope: 'read',
      acr_values: MFA,
    },
    session: { acr: SF, ago: 5 },
    expected: { signIn: 'acr', acr: MFA },
  },
  {
    name: 'OAuth 2.0: max_age makes the user sign in again',
    query: { client_id: 'conf', redirect_uri: REDIRECT, response_type: 'code', scope: 'read', max_age: '10' },
    session: { acr: SF, ago: 11 },
    expected: { signIn: 'max-age' },
  },
];

describe('the authorization step: a stronger or newer sign-in (AuthorizationService.next, decision 36)', () => {
  for (const row of STEPS) {
    it(row.name, async () => {
      const { engine, secret, user } = await fixture();
      try {
        const { verifier, challenge } = pkcePair();
        const query = new URLSearchParams({
          ...row.query,
          code_challenge: challenge,
          code_challenge_method: 'S256',
        });
        const validation = await engine.validateAuthorization(query.toString());
        assert.equal(validation.outcome, 'valid', JSON.stringify(validation));
        if (validation.outcome !== 'valid') return;
        const request = validation.request;
        if (row.allowed) {
          await engine.storage.grants.insert({
            id: randomUUID(),
            clientId: request.client.id,
            userId: user.id,
            scope: request.scope,
            createdAt: engine.clock.now(),
            expiresAt: null,
            revokedAt: null,
          });
        }
        const session: Authentication = {
          userId: user.id,
          authTime: engine.clock.now() - row.session.ago,
          sid: 'sid-1',
          acr: row.session.acr,
          amr: AMR[row.session.acr] ?? [],
        };
        const next = await engine.authorization.next(request, session, {
          interacted: row.interacted ?? false,
        });
        const expected = row.expected;
        if ('signIn' in expected) {
          assert.equal(next.step, 'sign-in', JSON.stringify(next));
          if (next.step !== 'sign-in') return;
          assert.equal(next.reason, expected.signIn);
          assert.equal(next.acr, expected.acr);
          return;
        }
        if ('consent' in expected) {
          assert.equal(next.step, 'consent', JSON.stringify(next));
          return;
        }
        assert.equal(next.step, 'respond', JSON.stringify(next));
        if (next.step !== 'respond') return;
        const params = answerParams(next.response);
        if ('error' in expected) {
          assert.equal(params.get('error'), expected.error, params.toString());
          assert.equal(params.get('code'), null);
          return;
        }
        const issued = params.get('code');
        assert.ok(issued, params.toString());
        const client = request.client;
        const tokens = await engine.token(
          withBasic(client, secret, {
            grant_type: 'authorization_code',
            code: issued,
            redirect_uri: REDIRECT,
            code_verifier: verifier,
          }),
        );
        const access = await liveClaims(engine, tokens.access_token);
        assert.equal(access.acr, expected.acr);
        assert.equal(access.auth_time, session.authTime);
        if (request.openid) {
          const idToken = decodeJwt(tokens.id_token ?? '');
          assert.equal(idToken.acr, expected.acr);
          assert.deepEqual(idToken.amr, AMR[row.session.acr]);
          assert.equal(idToken.auth_time, session.authTime);
        }
      } finally {
        await engine.close();
      }
    });
  }
});

function answerParams(response: AuthorizationResponse): URLSearchParams {
  return new URL(responseLocation(response)).searchParams;
}

describe('tokens issued on a sign-in carry its acr and auth_time, and keep them (RFC 9470 §4)', () => {
  for (const scope of ['openid offline_access', 'read']) {
    it(`code, then refresh, then introspection (scope ${scope})`, async () => {
      const { engine, secret, user } = await fixture();
      try {
        const { verifier, challenge } = pkcePair();
        const clientId = scope === 'read' ? 'conf' : 'rp';
        const query = new URLSearchParams({
          client_id: clientId,
          redirect_uri: REDIRECT,
          response_type: 'code',
          scope,
          state: 's',
          code_challenge: challenge,
          code_challenge_method: 'S256',
          ...(scope === 'read' ? {} : { prompt: 'consent' }),
        });
        const validation = await engine.validateAuthorization(query.toString());
        assert.equal(validation.outcome, 'valid', JSON.stringify(validation));
        if (validation.outcome !== 'valid') return;
        const signedInAt = engine.clock.now() - 30;
        const session: Authentication = {
          userId: user.id,
          authTime: signedInAt,
          sid: 'sid-1',
          acr: MFA,
          amr: ['pwd', 'otp', 'mfa'],
        };
        const response = await engine.authorization.approve(validation.request, session, {
          scope: validation.request.scope,
          lifetime: null,
        });
        const issued = answerParams(response).get('code') ?? '';
        const client = (await engine.storage.clients.get(clientId))!;
        const tokens = await engine.token(
          withBasic(client, secret, {
            grant_type: 'authorization_code',
            code: issued,
            redirect_uri: REDIRECT,
            code_verifier: verifier,
          }),
        );
        const first = await liveClaims(engine, tokens.access_token);
        assert.equal(first.acr, MFA);
        assert.equal(first.auth_time, signedInAt);
        assert.ok(tokens.refresh_token, 'a refresh token');
        // A later refresh: the original sign-in, not the time of the refresh.
        engine.clock.advance(600);
        const refreshed = await engine.token(
          withBasic(client, secret, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }),
        );
        const second = await liveClaims(engine, refreshed.access_token);
        assert.equal(second.acr, MFA);
        assert.equal(second.auth_time, signedInAt);
        if (scope !== 'read') {
          const idToken = decodeJwt(refreshed.id_token ?? '');
          assert.equal(idToken.acr, MFA);
          assert.deepEqual(idToken.amr, ['pwd', 'otp', 'mfa']);
        }
        const caller = client;
        const introspected = await engine.tokens.introspector.introspect(
          refreshed.access_token,
          undefined,
          caller,
        );
        assert.equal(introspected.active, true);
        assert.equal(introspected.acr, MFA);
        assert.equal(introspected.auth_time, signedInAt);
        const ofRefresh = await engine.tokens.introspector.introspect(
          refreshed.refresh_token ?? '',
          'refresh_token',
          caller,
        );
        assert.equal(ofRefresh.acr, MFA);
        assert.equal(ofRefresh.auth_time, signedInAt);
      } finally {
        await engine.close();
      }
    });
  }

  it('client_credentials: no sign-in, no acr or auth_time', async () => {
    const { engine } = await fixture();
    try {
      const client = (await engine.storage.clients.get('conf'))!;
      const tokens = await engine.issuer.issueAccessToken({
        client,
        subject: client.id,
        scope: ['read'],
        withRefreshToken: false,
      });
      const claims = await liveClaims(engine, tokens.access_token);
      assert.equal(claims.acr, undefined);
      assert.equal(claims.auth_time, undefined);
    } finally {
      await engine.close();
    }
  });
});

describe('the device grant (RFC 8628): the approving sign-in’s acr and auth_time reach the tokens', () => {
  for (const scope of ['read', 'openid offline_access']) {
    it(`scope ${scope}`, async () => {
      const engine = await testEngine();
      try {
        const { client } = await addClient(engine, {
          isPublic: true,
          redirectUris: [],
          grantTypes: ['urn:ietf:params:oauth:grant-type:device_code', 'refresh_token'],
          scopes: ['read', 'openid', 'offline_access'],
        });
        const user = await addUser(engine);
        const device = engine.engine.deviceAuthorization;
        const started = await device.start(client, { scope, resources: [] });
        const found = await device.find(started.user_code);
        assert.equal(found.outcome, 'pending');
        if (found.outcome !== 'pending') return;
        const signedInAt = engine.clock.now() - 45;
        const session: Authentication = {
          userId: user.id,
          authTime: signedInAt,
          sid: 'sid-1',
          acr: PHR,
          amr: ['hwk', 'user'],
        };
        const answer = await device.approve(started.user_code, session, {
          scope: found.request.scope,
          lifetime: null,
        });
        assert.equal(answer, 'approved');
        const tokens = await engine.token({
          authorization: undefined,
          params: {
            grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
            client_id: client.id,
            device_code: started.device_code,
          },
        });
        const access = await liveClaims(engine, tokens.access_token);
        assert.equal(access.acr, PHR);
        assert.equal(access.auth_time, signedInAt);
        if (scope !== 'read') {
          const idToken = decodeJwt(tokens.id_token ?? '');
          assert.equal(idToken.acr, PHR);
          assert.deepEqual(idToken.amr, ['hwk', 'user']);
          const refreshed = await engine.token({
            authorization: undefined,
            params: {
              grant_type: 'refresh_token',
              client_id: client.id,
              refresh_token: tokens.refresh_token ?? '',
            },
          });
          assert.equal((await liveClaims(engine, refreshed.access_token)).acr, PHR);
        }
      } finally {
        await engine.close();
      }
    });
  }
});

describe('token exchange (RFC 8693): the exchanged token acts for the subject token’s sign-in', () => {
  for (const signIn of [{ authTime: START - 90, acr: MFA }, undefined]) {
    it(
      signIn === undefined ? 'a subject token without a sign-in: none' : 'acr and auth_time repeated',
      async () => {
        const engine = await testEngine();
        try {
          const user = await addUser(engine);
          const { client: app } = await addClient(engine, { scopes: ['read'] });
          const service = await addClient(engine, {
            grantTypes: [TOKEN_EXCHANGE_GRANT],
            redirectUris: [],
            scopes: ['read'],
          });
          const grant = {
            id: randomUUID(),
            clientId: app.id,
            userId: user.id,
            scope: ['read'],
            createdAt: engine.clock.now(),
            expiresAt: null,
            revokedAt: null,
          };
          await engine.storage.grants.insert(grant);
          const subject = await engine.issuer.issueAccessToken({
            client: app,
            subject: user.id,
            scope: ['read'],
            grant,
            withRefreshToken: false,
            ...(signIn === undefined
              ? {}
              : {
                  authentication: {
                    authTime: signIn.authTime,
                    sid: null,
                    acr: signIn.acr,
                    amr: ['pwd', 'otp', 'mfa'],
                  },
                }),
          });
          const exchanged = await engine.token({
            authorization: basic(service.client.id, service.secret),
            params: {
              grant_type: TOKEN_EXCHANGE_GRANT,
              subject_token: subject.access_token,
              subject_token_type: ACCESS_TOKEN_TYPE,
            },
            resources: [],
            audiences: [],
          });
          const claims = await liveClaims(engine, exchanged.access_token);
          assert.equal(claims.acr, signIn?.acr);
          assert.equal(claims.auth_time, signIn?.authTime);
        } finally {
          await engine.close();
        }
      },
    );
  }
});

describe('consent under a weaker sign-in than an essential acr asks (AuthorizationService.approve)', () => {
  for (const acr of [SF, MFA]) {
    it(`signed in ${acr}, multi-factor essential`, async () => {
      const { engine, user } = await fixture();
      try {
        const query = new URLSearchParams({ ...code({ claims: essential([MFA]) }), ...pkceParams() });
        const validation = await engine.validateAuthorization(query.toString());
        assert.equal(validation.outcome, 'valid');
        if (validation.outcome !== 'valid') return;
        const session: Authentication = {
          userId: user.id,
          authTime: engine.clock.now(),
          sid: 'sid-1',
          acr,
          amr: AMR[acr] ?? [],
        };
        const response = await engine.authorization.approve(validation.request, session, {
          scope: validation.request.scope,
          lifetime: null,
        });
        const params = answerParams(response);
        if (acr === SF) {
          assert.equal(params.get('error'), 'unmet_authentication_requirements');
          assert.deepEqual(await engine.storage.grants.listByUser(user.id), [], 'no grant recorded');
        } else {
          assert.equal(params.get('error'), null, params.toString());
          assert.ok(params.get('code'));
        }
      } finally {
        await engine.close();
      }
    });
  }
});

function pkceParams(): Record<string, string> {
  return { code_challenge: pkcePair().challenge, code_challenge_method: 'S256' };
}
