import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { createLocalJWKSet, jwtVerify, type JWTPayload } from 'jose';
import type { AuthorizationStep } from '../../src/core/authorize/authorization-service.js';
import type { Authentication } from '../../src/core/sign-in/assurance.js';
import type { AuthorizationRequest } from '../../src/core/authorize/request.js';
import { responseLocation, type AuthorizationResponse } from '../../src/core/authorize/response.js';
import { sessionId } from '../../src/core/sign-in/browser-sessions.js';
import type { OAuthErrorCode } from '../../src/core/errors.js';
import type { Grant, User } from '../../src/core/model.js';
import { addClient, addUser, pkcePair, REDIRECT } from '../helpers/fakes/fixtures.js';
import { ISSUER, START, testEngine, type TestEngine } from '../helpers/fakes/test-engine.js';

// OpenID Connect authentication requests at the authorization endpoint (Core §3.1.2.1, §3.2.2.1,
// §3.3.2.1), as validateAuthorizationRequest checks them, what AuthorizationService.next() does with
// prompt, max_age and id_token_hint, and the responses of every response type (Core §3.2.2.5,
// §3.3.2.5; OAuth 2.0 Multiple Response Type Encoding Practices; Form Post Response Mode).

type Query = Record<string, string | string[]>;
type Mode = 'query' | 'fragment' | 'form_post';

/** Placeholders a row's query may hold, replaced by tokens the row's engine issued. */
const HINT = '$HINT';
const EXPIRED_HINT = '$EXPIRED_HINT';
const OTHER_USERS_HINT = '$OTHER_USERS_HINT';
const ACCESS_TOKEN = '$ACCESS_TOKEN';
const ALG_NONE_HINT = '$ALG_NONE_HINT';

type Expected =
  | { page: string }
  | { redirect: OAuthErrorCode; description?: string; mode: Mode }
  | { valid: Partial<Omit<AuthorizationRequest, 'client' | 'query'>> };

interface Row {
  name: string;
  query: Query;
  expected: Expected;
}

const { challenge: CHALLENGE } = pkcePair();
const ATTACKER = 'https://attacker.example/callback';
// Core §3.1.2.1: redirect_uri is REQUIRED in an OpenID Connect request.
const OIDC = { client_id: 'rp', redirect_uri: REDIRECT, state: 's' };

// The rows follow the order of the checks: each one breaks every later check too where it can, and
// the earlier check is the one answered.
const ROWS: Row[] = [
  {
    name: '1. an unknown client, whatever else is asked: a page (oidcc-ensure-registered-redirect-uri)',
    query: { client_id: 'nobody', response_type: 'id_token', scope: 'openid', response_mode: 'form_post' },
    expected: { page: 'The application is not registered here.' },
  },
  {
    name: '2. an unregistered redirect_uri with form_post: never posted to (oidcc-ensure-registered-redirect-uri)',
    query: {
      ...OIDC,
      redirect_uri: ATTACKER,
      response_type: 'code id_token',
      scope: 'openid',
      response_mode: 'form_post',
    },
    expected: { page: 'The return address (redirect_uri) is not one the application registered.' },
  },
  {
    name: '2. no redirect_uri, one registered: a page, as Core §3.1.2.1 requires it (oidcc-ensure-redirect-uri-in-authorization-request)',
    query: { client_id: 'rp-code', response_type: 'code', scope: 'openid', state: 's' },
    expected: { page: 'The request must say where to return to (redirect_uri), and it did not.' },
  },
  {
    name: '3. a repeated nonce, answered in the fragment of code id_token',
    query: { ...OIDC, response_type: 'code id_token', scope: 'openid', nonce: ['a', 'b'] },
    expected: { redirect: 'invalid_request', description: 'parameter repeated: nonce', mode: 'fragment' },
  },
  {
    name: '3. a repeated response_mode: the response type’s default carries the error',
    query: { ...OIDC, response_type: 'id_token', scope: 'openid', response_mode: ['form_post', 'query'] },
    expected: {
      redirect: 'invalid_request',
      description: 'parameter repeated: response_mode',
      mode: 'fragment',
    },
  },
  {
    name: '4. response_type missing (oidcc-response-type-missing)',
    query: { ...OIDC, scope: 'openid', nonce: 'n' },
    expected: { redirect: 'invalid_request', description: 'response_type is required', mode: 'query' },
  },
  {
    name: '4. id_token without openid is no OpenID Connect request: OAuth 2.0 knows code and token only',
    query: { ...OIDC, response_type: 'id_token', scope: 'read', nonce: 'n' },
    expected: {
      redirect: 'unsupported_response_type',
      description: 'response_type must be code or token',
      mode: 'query',
    },
  },
  {
    name: '4. a part twice is no response type',
    query: { ...OIDC, response_type: 'code code', scope: 'openid' },
    expected: {
      redirect: 'unsupported_response_type',
      description: 'response_type must be code, token, id_token or a combination of them',
      mode: 'query',
    },
  },
  {
    name: '4. an unknown part, even with form_post asked for: the query',
    query: { ...OIDC, response_type: 'code device', scope: 'openid', response_mode: 'form_post' },
    expected: { redirect: 'unsupported_response_type', mode: 'query' },
  },
  {
    name: '4. id_token for a client without the implicit grant, in the fragment',
    query: {
      client_id: 'rp-code',
      redirect_uri: REDIRECT,
      response_type: 'id_token',
      scope: 'openid',
      nonce: 'n',
      state: 's',
    },
    expected: {
      redirect: 'unauthorized_client',
      description: 'this client is not registered for the implicit grant',
      mode: 'fragment',
    },
  },
  {
    name: '4. code id_token for a client without the authorization_code grant',
    query: {
      client_id: 'rp-implicit',
      redirect_uri: REDIRECT,
      response_type: 'code id_token',
      scope: 'openid',
      nonce: 'n',
      state: 's',
    },
    expected: {
      redirect: 'unauthorized_client',
      description: 'this client is not registered for the authorization_code grant',
      mode: 'fragment',
    },
  },
  {
    name: '4a. an unknown response_mode',
    query: { ...OIDC, response_type: 'id_token', scope: 'openid', response_mode: 'jwt', nonce: 'n' },
    expected: {
      redirect: 'invalid_request',
      description: 'response_mode must be query, fragment or form_post',
      mode: 'fragment',
    },
  },
  {
    name: '4a. response_mode=query for an ID token: refused, and the refusal is not in the query either',
    query: { ...OIDC, response_type: 'id_token token', scope: 'openid', response_mode: 'query', nonce: 'n' },
    expected: {
      redirect: 'invalid_request',
      description: 'a token or an ID token is never sent in the query (response_mode)',
      mode: 'fragment',
    },
  },
  {
    name: '4b. a request object: request_not_supported, in form_post as asked, before the scope',
    query: {
      ...OIDC,
      response_type: 'code',
      scope: 'openid admin',
      response_mode: 'form_post',
      request: 'eyJ.e30.',
    },
    expected: { redirect: 'request_not_supported', mode: 'form_post' },
  },
  {
    name: '4b. request_uri: request_uri_not_supported',
    query: { ...OIDC, response_type: 'code', scope: 'openid', request_uri: 'https://rp.example/request.jwt' },
    expected: { redirect: 'request_uri_not_supported', mode: 'query' },
  },
  {
    name: '5. a scope outside the client’s',
    query: { ...OIDC, response_type: 'code', scope: 'openid admin' },
    expected: {
      redirect: 'invalid_scope',
      description: 'scope not allowed for this client: admin',
      mode: 'query',
    },
  },
  {
    name: '5. address and phone, standard scope values Gatehouse keeps no claims for, are ignored (Core §3.1.2.1)',
    query: { ...OIDC, response_type: 'code', scope: 'openid address profile phone' },
    expected: { valid: { scope: ['openid', 'profile'] } },
  },
  {
    name: '5. address without openid is an OAuth request: outside the client’s scope',
    query: { ...OIDC, response_type: 'code', scope: 'address' },
    expected: {
      redirect: 'invalid_scope',
      description: 'scope not allowed for this client: address',
      mode: 'query',
    },
  },
  {
    name: '5. offline_access without prompt=consent is ignored, even where the client may not have it (Core §11)',
    query: {
      client_id: 'rp-code',
      redirect_uri: REDIRECT,
      response_type: 'code',
      scope: 'openid offline_access',
    },
    expected: { valid: { scope: ['openid'] } },
  },
  {
    name: '5. offline_access without prompt=consent, for a client that may have it: kept, for the consent page to list (decision 17)',
    query: { ...OIDC, response_type: 'code', scope: 'openid offline_access' },
    expected: { valid: { scope: ['openid', 'offline_access'], forceConsent: false } },
  },
  {
    name: '5. offline_access with prompt=none: ignored, no page can ask (Core §11)',
    query: { ...OIDC, response_type: 'code', scope: 'openid offline_access', prompt: 'none' },
    expected: { valid: { scope: ['openid'] } },
  },
  {
    name: '5. offline_access without prompt=consent, the client not registered for refresh_token: ignored',
    query: {
      client_id: 'rp-no-refresh',
      redirect_uri: REDIRECT,
      response_type: 'code',
      scope: 'openid offline_access',
    },
    expected: { valid: { scope: ['openid'] } },
  },
  {
    name: '5. offline_access with prompt=consent and a code is kept',
    query: { ...OIDC, response_type: 'code', scope: 'openid offline_access', prompt: 'consent' },
    expected: { valid: { scope: ['openid', 'offline_access'], forceConsent: true } },
  },
  {
    name: '5. offline_access with prompt=consent but no code is ignored',
    query: {
      ...OIDC,
      response_type: 'id_token token',
      scope: 'openid offline_access',
      prompt: 'consent',
      nonce: 'n',
    },
    expected: { valid: { scope: ['openid'] } },
  },
  {
    name: '6. a public client’s hybrid request without PKCE',
    query: {
      client_id: 'pub-rp',
      redirect_uri: REDIRECT,
      response_type: 'code id_token',
      scope: 'openid',
      nonce: 'n',
      state: 's',
    },
    expected: {
      redirect: 'invalid_request',
      description: 'public clients must send a code_challenge (S256)',
      mode: 'fragment',
    },
  },
  {
    name: '7a. id_token without a nonce (oidcc-ensure-request-without-nonce-fails)',
    query: { ...OIDC, response_type: 'id_token', scope: 'openid', prompt: 'bogus' },
    expected: {
      redirect: 'invalid_request',
      description: 'nonce is required when the response includes an ID token',
      mode: 'fragment',
    },
  },
  {
    name: '7a. code id_token token without a nonce',
    query: { ...OIDC, response_type: 'code id_token token', scope: 'openid' },
    expected: { redirect: 'invalid_request', mode: 'fragment' },
  },
  {
    name: '7a. code without a nonce (oidcc-ensure-request-without-nonce-succeeds-for-code-flow)',
    query: { ...OIDC, response_type: 'code', scope: 'openid' },
    expected: { valid: { nonce: null, responseMode: 'query' } },
  },
  {
    name: '7a. code token without a nonce: no ID token from this endpoint, none needed',
    query: { ...OIDC, response_type: 'code token', scope: 'openid' },
    expected: { valid: { responseType: 'code token', nonce: null, responseMode: 'fragment' } },
  },
  {
    name: '7a. a nonce over 2048 characters',
    query: { ...OIDC, response_type: 'id_token', scope: 'openid', nonce: 'n'.repeat(2049) },
    expected: {
      redirect: 'invalid_request',
      description: 'nonce is longer than 2048 characters',
      mode: 'fragment',
    },
  },
  {
    name: '7b. prompt=none with another value',
    query: { ...OIDC, response_type: 'code', scope: 'openid', prompt: 'none login', max_age: 'x' },
    expected: {
      redirect: 'invalid_request',
      description: 'prompt=none cannot be combined with other prompt values',
      mode: 'query',
    },
  },
  {
    name: '7b. an unknown prompt value',
    query: { ...OIDC, response_type: 'code', scope: 'openid', prompt: 'login create' },
    expected: { redirect: 'invalid_request', description: 'unknown prompt value: create', mode: 'query' },
  },
  {
    name: '7c. a negative max_age',
    query: { ...OIDC, response_type: 'code', scope: 'openid', max_age: '-1', id_token_hint: 'junk' },
    expected: {
      redirect: 'invalid_request',
      description: 'max_age must be a whole number of seconds',
      mode: 'query',
    },
  },
  {
    name: '7d. an id_token_hint that is no JWT',
    query: { ...OIDC, response_type: 'code', scope: 'openid', id_token_hint: 'junk' },
    expected: {
      redirect: 'invalid_request',
      description: 'id_token_hint is not an ID token issued by this server',
      mode: 'query',
    },
  },
  {
    name: '7d. an access token of this server is no id_token_hint',
    query: { ...OIDC, response_type: 'code', scope: 'openid', id_token_hint: ACCESS_TOKEN },
    expected: { redirect: 'invalid_request', mode: 'query' },
  },
  {
    name: '7d. an ID token changed to alg none is no id_token_hint',
    query: { ...OIDC, response_type: 'code', scope: 'openid', id_token_hint: ALG_NONE_HINT },
    expected: { redirect: 'invalid_request', mode: 'query' },
  },
  // Valid requests
  {
    name: 'valid: the parts of a response type in any order',
    query: { ...OIDC, response_type: 'token id_token', scope: 'openid profile', nonce: 'n-1' },
    expected: {
      valid: {
        responseType: 'id_token token',
        responseMode: 'fragment',
        openid: true,
        nonce: 'n-1',
        scope: ['openid', 'profile'],
      },
    },
  },
  {
    name: 'valid: code id_token defaults to the fragment',
    query: { ...OIDC, response_type: 'code id_token', scope: 'openid', nonce: 'n' },
    expected: { valid: { responseType: 'code id_token', responseMode: 'fragment' } },
  },
  {
    name: 'valid: form_post as asked',
    query: { ...OIDC, response_type: 'code', scope: 'openid', response_mode: 'form_post' },
    expected: { valid: { responseMode: 'form_post' } },
  },
  {
    name: 'valid: a code in the fragment as asked',
    query: { ...OIDC, response_type: 'code', scope: 'openid', response_mode: 'fragment' },
    expected: { valid: { responseMode: 'fragment' } },
  },
  {
    name: 'valid: prompt, max_age=0 and login_hint read',
    query: {
      ...OIDC,
      response_type: 'code',
      scope: 'openid',
      prompt: 'login consent',
      max_age: '0',
      login_hint: 'alice',
    },
    expected: {
      valid: {
        prompt: { none: false, login: true, consent: true, selectAccount: false },
        forceConsent: true,
        maxAge: 0,
        loginHint: 'alice',
      },
    },
  },
  {
    name: 'valid: prompt=select_account',
    query: { ...OIDC, response_type: 'code', scope: 'openid', prompt: 'select_account' },
    expected: { valid: { prompt: { none: false, login: false, consent: false, selectAccount: true } } },
  },
  {
    name: 'valid: display, ui_locales, claims_locales, acr_values and unknown parameters are ignored (oidcc-display-page, oidcc-ui-locales, oidcc-claims-locales, oidcc-ensure-request-with-acr-values-succeeds, oidcc-ensure-request-with-unknown-parameter-succeeds)',
    query: {
      ...OIDC,
      response_type: 'code',
      scope: 'openid',
      display: 'popup',
      ui_locales: 'se',
      claims_locales: 'se',
      acr_values: '1 2',
      extra: 'foobar',
    },
    expected: { valid: { responseType: 'code', openid: true } },
  },
  {
    name: 'valid: an expired id_token_hint still hints (oidcc-id-token-hint)',
    query: { ...OIDC, response_type: 'code', scope: 'openid', id_token_hint: EXPIRED_HINT },
    expected: { valid: { openid: true } },
  },
  {
    name: 'valid: an omitted scope stands for the registered ones, openid among them',
    query: {
      client_id: 'rp-default',
      redirect_uri: REDIRECT,
      response_type: 'code',
      code_challenge: CHALLENGE,
      code_challenge_method: 'S256',
    },
    expected: { valid: { openid: true, scope: ['openid', 'read'] } },
  },
  {
    name: 'valid: without openid the OpenID parameters are not read (OAuth 2.0 as before)',
    query: {
      client_id: 'conf',
      response_type: 'code',
      scope: 'read',
      response_mode: 'form_post',
      prompt: 'none',
      max_age: 'x',
      request: 'x',
      id_token_hint: 'junk',
    },
    expected: {
      valid: {
        openid: false,
        responseMode: 'query',
        prompt: { none: false, login: false, consent: false, selectAccount: false },
        maxAge: null,
        idTokenHint: undefined,
      },
    },
  },
];

interface Fixture {
  engine: TestEngine;
  user: User;
  other: User;
  tokens: Record<string, string>;
}

async function fixture(): Promise<Fixture> {
  const engine = await testEngine();
  const both: { grantTypes: ['authorization_code', 'implicit', 'refresh_token'] } = {
    grantTypes: ['authorization_code', 'implicit', 'refresh_token'],
  };
  const { client: rp } = await addClient(engine, {
    id: 'rp',
    name: 'Relying Party',
    ...both,
    scopes: ['openid', 'profile', 'email', 'offline_access', 'read'],
  });
  await addClient(engine, {
    id: 'rp-code',
    grantTypes: ['authorization_code'],
    scopes: ['openid', 'profile'],
  });
  await addClient(engine, {
    id: 'rp-no-refresh',
    grantTypes: ['authorization_code'],
    scopes: ['openid', 'offline_access'],
  });
  await addClient(engine, { id: 'rp-implicit', grantTypes: ['implicit'], scopes: ['openid', 'profile'] });
  await addClient(engine, {
    id: 'rp-default',
    grantTypes: ['authorization_code'],
    scopes: ['openid', 'read'],
  });
  await addClient(engine, { id: 'pub-rp', ...both, scopes: ['openid'], isPublic: true });
  await addClient(engine, { id: 'conf', scopes: ['read', 'write'] });
  const user = await addUser(engine);
  const other = await addUser(engine);
  const idTokens = engine.engine.idTokens;
  const hint = await idTokens.issue({
    client: rp,
    userId: user.id,
    scope: ['openid'],
    authTime: START,
    sid: 'sid-1',
  });
  const expired = await idTokens.issue({
    client: rp,
    userId: user.id,
    scope: ['openid'],
    authTime: START - 86_400,
    sid: 'sid-0',
    now: START - 86_400,
  });
  const otherHint = await idTokens.issue({
    client: rp,
    userId: other.id,
    scope: ['openid'],
    authTime: START,
    sid: 'x',
  });
  const access = await engine.issuer.issueAccessToken({
    client: rp,
    subject: user.id,
    scope: ['openid'],
    withRefreshToken: false,
  });
  const [, payload] = hint.split('.');
  const algNone = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${payload}.`;
  return {
    engine,
    user,
    other,
    tokens: {
      [HINT]: hint,
      [EXPIRED_HINT]: expired,
      [OTHER_USERS_HINT]: otherHint,
      [ACCESS_TOKEN]: access.access_token,
      [ALG_NONE_HINT]: algNone,
    },
  };
}

function queryString(query: Query, tokens: Record<string, string> = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    for (const item of Array.isArray(value) ? value : [value]) params.append(name, tokens[item] ?? item);
  }
  return params.toString();
}

/** The parameters of a response wherever its mode put them, after checking nothing went elsewhere. */
function responseParams(response: AuthorizationResponse, mode: Mode, base = REDIRECT): URLSearchParams {
  assert.equal(response.mode, mode);
  assert.equal(response.redirectUri, base);
  if (mode === 'form_post') return new URLSearchParams(response.params);
  const location = new URL(responseLocation(response));
  assert.equal(location.origin + location.pathname, base);
  if (mode === 'fragment') {
    assert.equal(location.search, new URL(base).search, 'nothing added to the query');
    return new URLSearchParams(location.hash.slice(1));
  }
  assert.equal(location.hash, '', 'nothing in the fragment');
  return location.searchParams;
}

describe('OpenID Connect authentication requests, in the order of their checks (Core §3.1.2.1)', () => {
  for (const row of ROWS) {
    it(row.name, async () => {
      const { engine, tokens } = await fixture();
      try {
        const validation = await engine.validateAuthorization(queryString(row.query, tokens));
        const expected = row.expected;
        if ('page' in expected) {
          assert.deepEqual(validation, { outcome: 'error-page', description: expected.page });
        } else if ('redirect' in expected) {
          assert.equal(validation.outcome, 'error-redirect', JSON.stringify(validation));
          if (validation.outcome !== 'error-redirect') return;
          assert.equal(validation.error, expected.redirect);
          const params = responseParams(validation.response, expected.mode);
          assert.equal(params.get('error'), expected.redirect);
          const description = params.get('error_description') ?? '';
          if (expected.description !== undefined) assert.equal(description, expected.description);
          else assert.ok(description.length > 0);
          assert.equal(params.get('state'), 's');
        } else {
          assert.equal(validation.outcome, 'valid', JSON.stringify(validation));
          if (validation.outcome !== 'valid') return;
          const request = validation.request;
          assert.deepEqual(
            Object.fromEntries(
              Object.keys(expected.valid).map((key) => [key, request[key as keyof typeof request]]),
            ),
            expected.valid,
          );
        }
      } finally {
        await engine.close();
      }
    });
  }

  it('the id_token_hint a request carries is read: its subject and audience', async () => {
    const { engine, user, tokens } = await fixture();
    try {
      const validation = await engine.validateAuthorization(
        queryString({ ...OIDC, response_type: 'code', scope: 'openid', id_token_hint: HINT }, tokens),
      );
      assert.equal(validation.outcome, 'valid');
      if (validation.outcome !== 'valid') return;
      assert.deepEqual(validation.request.idTokenHint, { sub: user.id, audience: ['rp'], sid: 'sid-1' });
    } finally {
      await engine.close();
    }
  });
});

// What the request needs next, for who is signed in (AuthorizationService.next).

interface StepRow {
  name: string;
  query: Query;
  /** Who is signed in; absent: nobody is. */
  signedIn?: {
    /** Signed in this many seconds ago. */
    ago: number;
    /** A live grant of the user to the client covering the request (a consent remembered). */
    allowed?: boolean;
    /** The browser has just signed in (or chosen its account) for this request. */
    interacted?: boolean;
  };
  expected:
    | { step: Exclude<AuthorizationStep['step'], 'respond'>; reason?: string }
    | { error: OAuthErrorCode; mode: Mode }
    | { success: Mode };
}

/** An OpenID Connect request of the code flow for `openid`, with `more` parameters. */
function openidCode(more: Query = {}): Query {
  return { ...OIDC, response_type: 'code', scope: 'openid', ...more };
}

const STEPS: StepRow[] = [
  {
    name: 'prompt=none, nobody signed in: login_required at once (oidcc-prompt-none-not-logged-in)',
    query: openidCode({ prompt: 'none' }),
    expected: { error: 'login_required', mode: 'query' },
  },
  {
    name: 'prompt=none, nobody signed in, id_token: login_required in the fragment',
    query: { ...OIDC, response_type: 'id_token', scope: 'openid', prompt: 'none', nonce: 'n' },
    expected: { error: 'login_required', mode: 'fragment' },
  },
  {
    name: 'prompt=none with form_post: the error is posted',
    query: openidCode({ prompt: 'none', response_mode: 'form_post' }),
    expected: { error: 'login_required', mode: 'form_post' },
  },
  {
    name: 'prompt=none, a sign-in older than max_age: login_required',
    query: openidCode({ prompt: 'none', max_age: '60' }),
    signedIn: { ago: 61, allowed: true },
    expected: { error: 'login_required', mode: 'query' },
  },
  {
    name: 'prompt=none, id_token_hint of another user: login_required',
    query: openidCode({ prompt: 'none', id_token_hint: OTHER_USERS_HINT }),
    signedIn: { ago: 5, allowed: true },
    expected: { error: 'login_required', mode: 'query' },
  },
  {
    name: 'prompt=none, signed in, never allowed: consent_required',
    query: openidCode({ prompt: 'none' }),
    signedIn: { ago: 5 },
    expected: { error: 'consent_required', mode: 'query' },
  },
  {
    name: 'prompt=none, a token in the response: consent is never remembered (decision 10), interaction_required',
    query: { ...OIDC, response_type: 'id_token token', scope: 'openid', prompt: 'none', nonce: 'n' },
    signedIn: { ago: 5, allowed: true },
    expected: { error: 'interaction_required', mode: 'fragment' },
  },
  {
    name: 'prompt=none, signed in and allowed before: answered at once (oidcc-prompt-none-logged-in)',
    query: openidCode({ prompt: 'none', max_age: '60' }),
    signedIn: { ago: 60, allowed: true },
    expected: { success: 'query' },
  },
  {
    name: 'prompt=none with the signed-in user’s id_token_hint: answered at once (oidcc-id-token-hint)',
    query: {
      ...OIDC,
      response_type: 'code id_token',
      scope: 'openid',
      prompt: 'none',
      nonce: 'n',
      id_token_hint: HINT,
    },
    signedIn: { ago: 5, allowed: true },
    expected: { success: 'fragment' },
  },
  {
    name: 'nobody signed in: the sign-in page',
    query: openidCode(),
    expected: { step: 'sign-in', reason: 'signed-out' },
  },
  {
    name: 'prompt=login, signed in and allowed: the password again (oidcc-prompt-login)',
    query: openidCode({ prompt: 'login' }),
    signedIn: { ago: 1, allowed: true },
    expected: { step: 'sign-in', reason: 'login' },
  },
  {
    name: 'prompt=login, just signed in for this request: on to the answer',
    query: openidCode({ prompt: 'login' }),
    signedIn: { ago: 0, allowed: true, interacted: true },
    expected: { success: 'query' },
  },
  {
    name: 'max_age=0 is prompt=login',
    query: openidCode({ max_age: '0' }),
    signedIn: { ago: 0, allowed: true },
    expected: { step: 'sign-in', reason: 'login' },
  },
  {
    name: 'max_age=0, just signed in for this request: on to consent',
    query: openidCode({ max_age: '0' }),
    signedIn: { ago: 0, interacted: true },
    expected: { step: 'consent' },
  },
  {
    name: 'a sign-in older than max_age: the password again (oidcc-max-age-1)',
    query: openidCode({ max_age: '1' }),
    signedIn: { ago: 2, allowed: true },
    expected: { step: 'sign-in', reason: 'max-age' },
  },
  {
    name: 'a sign-in within max_age: no new one (oidcc-max-age-10000)',
    query: openidCode({ max_age: '10000' }),
    signedIn: { ago: 10_000, allowed: true },
    expected: { success: 'query' },
  },
  {
    name: 'prompt=select_account: the account choice',
    query: openidCode({ prompt: 'select_account' }),
    signedIn: { ago: 5, allowed: true },
    expected: { step: 'select-account' },
  },
  {
    name: 'prompt=select_account, the account just chosen: on to the answer',
    query: openidCode({ prompt: 'select_account' }),
    signedIn: { ago: 5, allowed: true, interacted: true },
    expected: { success: 'query' },
  },
  {
    name: 'an id_token_hint of another user without prompt=none is only a hint',
    query: openidCode({ id_token_hint: OTHER_USERS_HINT }),
    signedIn: { ago: 5 },
    expected: { step: 'consent' },
  },
  {
    name: 'prompt=consent: the consent page although allowed before',
    query: openidCode({ prompt: 'consent' }),
    signedIn: { ago: 5, allowed: true },
    expected: { step: 'consent' },
  },
  {
    name: 'id_token from a confidential https client allowed before: answered at once',
    query: { ...OIDC, response_type: 'id_token', scope: 'openid', nonce: 'n' },
    signedIn: { ago: 5, allowed: true },
    expected: { success: 'fragment' },
  },
  {
    name: 'OAuth 2.0 (no openid): prompt=none is not read, the sign-in page as always',
    query: { client_id: 'conf', response_type: 'code', scope: 'read', prompt: 'none' },
    expected: { step: 'sign-in', reason: 'signed-out' },
  },
];

async function grantFor(engine: TestEngine, clientId: string, user: User, scope: string[]): Promise<Grant> {
  const grant: Grant = {
    id: randomUUID(),
    clientId,
    userId: user.id,
    scope,
    createdAt: engine.clock.now(),
    expiresAt: null,
    revokedAt: null,
  };
  await engine.storage.grants.insert(grant);
  return grant;
}

describe('what a request needs next: prompt, max_age, id_token_hint (Core §3.1.2.1, §3.1.2.6)', () => {
  for (const row of STEPS) {
    it(row.name, async () => {
      const { engine, user, tokens } = await fixture();
      try {
        const validation = await engine.validateAuthorization(queryString(row.query, tokens));
        assert.equal(validation.outcome, 'valid', JSON.stringify(validation));
        if (validation.outcome !== 'valid') return;
        const request = validation.request;
        const { signedIn } = row;
        if (signedIn?.allowed) await grantFor(engine, request.client.id, user, request.scope);
        let session: Authentication | { userId: string } | undefined;
        if (signedIn !== undefined) {
          session = request.openid
            ? { userId: user.id, authTime: engine.clock.now() - signedIn.ago, sid: 'sid-now' }
            : { userId: user.id };
        }
        const next = await engine.authorization.next(request, session, {
          interacted: signedIn?.interacted ?? false,
        });
        const expected = row.expected;
        if ('step' in expected) {
          assert.equal(next.step, expected.step, JSON.stringify(next));
          if (expected.reason !== undefined && next.step === 'sign-in')
            assert.equal(next.reason, expected.reason);
          return;
        }
        assert.equal(next.step, 'respond', JSON.stringify(next));
        if (next.step !== 'respond') return;
        if ('error' in expected) {
          const params = responseParams(next.response, expected.mode);
          assert.equal(params.get('error'), expected.error);
          assert.equal(params.get('state'), 's');
          return;
        }
        const params = responseParams(next.response, expected.success);
        assert.equal(params.get('error'), null, params.toString());
        assert.equal(params.get('state'), 's');
      } finally {
        await engine.close();
      }
    });
  }
});

/**
 * /authorize reads the signed-in user's grants to the client with the session (one statement) and
 * hands them to next(): the remembered consent is looked for among those alone, and only a live grant
 * of this user to this client, covering the request, answers it.
 */
const GIVEN_GRANTS: {
  name: string;
  /** The grant handed to next() (and stored: a code names its grant), for this user and client unless it says otherwise. */
  given: 'none' | 'covering' | 'other-user' | 'other-client' | 'revoked' | 'narrower';
  /** A covering grant in the store, which next() must not read when grants are given. */
  stored?: boolean;
  expected: AuthorizationStep['step'];
}[] = [
  { name: 'a covering grant given: answered at once, under it', given: 'covering', expected: 'respond' },
  {
    name: 'no grant given, one stored: consent (the store is not read again)',
    given: 'none',
    stored: true,
    expected: 'consent',
  },
  { name: 'another user’s grant given: consent', given: 'other-user', expected: 'consent' },
  { name: 'a grant to another client given: consent', given: 'other-client', expected: 'consent' },
  { name: 'a revoked grant given: consent', given: 'revoked', expected: 'consent' },
  { name: 'a grant narrower than the request given: consent', given: 'narrower', expected: 'consent' },
];

describe('what a request needs next, with the grants read with the session', () => {
  for (const row of GIVEN_GRANTS) {
    it(row.name, async () => {
      const { engine, user, other } = await fixture();
      try {
        const validation = await engine.validateAuthorization(
          queryString({ ...OIDC, response_type: 'code', scope: 'openid read', nonce: 'n' }),
        );
        assert.equal(validation.outcome, 'valid', JSON.stringify(validation));
        if (validation.outcome !== 'valid') return;
        const request = validation.request;
        if (row.stored === true) await grantFor(engine, request.client.id, user, request.scope);
        const grant: Grant = {
          id: randomUUID(),
          clientId: row.given === 'other-client' ? 'rp-code' : request.client.id,
          userId: row.given === 'other-user' ? other.id : user.id,
          scope: row.given === 'narrower' ? ['openid'] : request.scope,
          createdAt: engine.clock.now(),
          expiresAt: null,
          revokedAt: row.given === 'revoked' ? engine.clock.now() - 1 : null,
        };
        if (row.given !== 'none') await engine.storage.grants.insert(grant);
        const session = { userId: user.id, authTime: engine.clock.now() - 5, sid: 'sid-now' };
        const next = await engine.authorization.next(request, session, {
          interacted: false,
          grants: row.given === 'none' ? [] : [grant],
        });
        assert.equal(next.step, row.expected, JSON.stringify(next));
        if (next.step !== 'respond') return;
        const params = responseParams(next.response, 'query');
        assert.notEqual(params.get('code'), null, params.toString());
        // The code is issued under the given grant.
        const code = await engine.storage.codes.get(
          createHash('sha256')
            .update(params.get('code') ?? '')
            .digest('base64url'),
        );
        assert.equal(code?.grantId, grant.id);
      } finally {
        await engine.close();
      }
    });
  }
});

// The responses: what each response type returns, and its ID token (Core §3.2.2.5, §3.3.2.5, §3.3.2.11).

/** Core §3.3.2.11: base64url of the left half of the SHA-256 of the value's ASCII octets (RS256). */
function leftHalf(value: string): string {
  const digest = createHash('sha256').update(value, 'ascii').digest();
  return digest.subarray(0, 16).toString('base64url');
}

async function verifyIdToken(engine: TestEngine, token: string, audience: string): Promise<JWTPayload> {
  const jwks = createLocalJWKSet(await engine.keyRing.publicJwks());
  const { payload, protectedHeader } = await jwtVerify(token, jwks, {
    issuer: ISSUER,
    audience,
    currentDate: new Date(engine.clock.now() * 1000),
  });
  assert.equal(protectedHeader.alg, 'RS256');
  return payload;
}

const RESPONSES: { type: string; mode?: Mode; names: string[] }[] = [
  { type: 'code', names: ['code', 'state', 'iss'] },
  { type: 'id_token', names: ['id_token', 'state', 'iss'] },
  {
    type: 'id_token token',
    names: ['access_token', 'token_type', 'expires_in', 'scope', 'id_token', 'state', 'iss'],
  },
  { type: 'code id_token', names: ['code', 'id_token', 'state', 'iss'] },
  {
    type: 'code token',
    names: ['code', 'access_token', 'token_type', 'expires_in', 'scope', 'state', 'iss'],
  },
  {
    type: 'code id_token token',
    names: ['code', 'access_token', 'token_type', 'expires_in', 'scope', 'id_token', 'state', 'iss'],
  },
  { type: 'code id_token', mode: 'form_post', names: ['code', 'id_token', 'state', 'iss'] },
  {
    type: 'id_token token',
    mode: 'form_post',
    names: ['access_token', 'token_type', 'expires_in', 'scope', 'id_token', 'state', 'iss'],
  },
];

describe('the responses of every response type, with their ID tokens (Core §3.2.2.5, §3.3.2.5)', () => {
  for (const row of RESPONSES) {
    const mode = row.mode ?? (row.type === 'code' ? 'query' : 'fragment');
    it(`${row.type}${row.mode ? ` (response_mode=${row.mode})` : ''}: ${row.names.join(', ')} in the ${mode}`, async () => {
      const { engine, user } = await fixture();
      try {
        const query: Query = {
          ...OIDC,
          response_type: row.type,
          scope: 'openid profile',
          nonce: 'n-0S6_WzA2Mj',
        };
        if (row.mode) query.response_mode = row.mode;
        const validation = await engine.validateAuthorization(queryString(query));
        assert.equal(validation.outcome, 'valid', JSON.stringify(validation));
        if (validation.outcome !== 'valid') return;
        const authTime = engine.clock.now() - 30;
        const response = await engine.authorization.approve(
          validation.request,
          { userId: user.id, authTime, sid: 'sid-of-session' },
          { scope: ['openid', 'profile'], lifetime: 3600 },
        );
        const params = responseParams(response, mode);
        assert.deepEqual([...params.keys()], row.names);
        assert.equal(params.get('state'), 's');
        assert.equal(params.get('iss'), ISSUER, 'RFC 9207 §2');
        const code = params.get('code');
        const accessToken = params.get('access_token');
        const idToken = params.get('id_token');
        if (idToken !== null) {
          const claims = await verifyIdToken(engine, idToken, 'rp');
          assert.equal(claims.sub, user.id);
          assert.equal(claims.nonce, 'n-0S6_WzA2Mj');
          assert.equal(claims.auth_time, authTime);
          assert.equal(claims.sid, 'sid-of-session');
          assert.equal(claims.at_hash, accessToken === null ? undefined : leftHalf(accessToken));
          assert.equal(claims.c_hash, code === null ? undefined : leftHalf(code));
          // Core §5.4: the profile claims ride in the ID token only when no access token or code is issued.
          assert.equal(claims.preferred_username, row.type === 'id_token' ? user.username : undefined);
        }
        if (code !== null) {
          // The code remembers the nonce and the sign-in, for the token endpoint's ID token (Core §3.1.3.6).
          const stored = await engine.storage.codes.get(
            createHash('sha256').update(code).digest('base64url'),
          );
          assert.equal(stored?.nonce, 'n-0S6_WzA2Mj');
          assert.equal(stored?.authTime, authTime);
          assert.equal(stored?.sid, 'sid-of-session');
          const body = await engine.token({
            authorization: `Basic ${Buffer.from('rp:secret-of-rp').toString('base64')}`,
            params: { grant_type: 'authorization_code', code, redirect_uri: REDIRECT },
          });
          const fromToken = await verifyIdToken(engine, body.id_token ?? '', 'rp');
          assert.equal(fromToken.nonce, 'n-0S6_WzA2Mj');
          assert.equal(fromToken.auth_time, authTime);
          assert.equal(fromToken.sid, 'sid-of-session');
        }
      } finally {
        await engine.close();
      }
    });
  }

  it('an OAuth 2.0 code keeps no nonce or sign-in, as before', async () => {
    const { engine, user } = await fixture();
    try {
      const validation = await engine.validateAuthorization(
        queryString({ client_id: 'conf', response_type: 'code', scope: 'read', nonce: 'n' }),
      );
      assert.equal(validation.outcome, 'valid');
      if (validation.outcome !== 'valid') return;
      const response = await engine.authorization.approve(validation.request, user.id, {
        scope: ['read'],
        lifetime: 3600,
      });
      const code = responseParams(response, 'query').get('code') ?? '';
      const stored = await engine.storage.codes.get(createHash('sha256').update(code).digest('base64url'));
      assert.deepEqual([stored?.nonce, stored?.authTime, stored?.sid], [null, null, null]);
    } finally {
      await engine.close();
    }
  });

  it('an error answers in the request’s mode: access_denied posted for form_post', async () => {
    const { engine } = await fixture();
    try {
      const validation = await engine.validateAuthorization(
        queryString({ ...OIDC, response_type: 'code', scope: 'openid', response_mode: 'form_post' }),
      );
      assert.equal(validation.outcome, 'valid');
      if (validation.outcome !== 'valid') return;
      const params = responseParams(await engine.authorization.deny(validation.request), 'form_post');
      assert.equal(params.get('error'), 'access_denied');
      assert.equal(params.get('state'), 's');
    } finally {
      await engine.close();
    }
  });
});

describe('a browser session’s sid (Core §2)', () => {
  it('is stable for the session, differs between sessions, and is not the stored hash', async () => {
    const engine = await testEngine();
    try {
      const user = await addUser(engine);
      const sessions = engine.engine.browserSessions;
      const first = await sessions.start(user.id, { method: 'password', at: engine.clock.now() });
      engine.clock.advance(7);
      const second = await sessions.start(user.id, { method: 'password', at: engine.clock.now() });
      const a = await sessions.authentication(first);
      const again = await sessions.authentication(first);
      const b = await sessions.authentication(second);
      assert.equal(a?.userId, user.id);
      assert.equal(a?.authTime, START);
      assert.equal(b?.authTime, START + 7);
      assert.equal(a?.sid, again?.sid);
      assert.notEqual(a?.sid, b?.sid);
      const hash = createHash('sha256').update(first).digest('base64url');
      assert.equal(a?.sid, sessionId(hash));
      assert.notEqual(a?.sid, hash);
      await sessions.end(first);
      assert.equal(await sessions.authentication(first), undefined);
    } finally {
      await engine.close();
    }
  });
});
