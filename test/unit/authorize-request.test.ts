import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { responseLocation } from '../../src/core/authorize/response.js';
import type { AuthorizationRequest } from '../../src/core/authorize/request.js';
import type { OAuthErrorCode } from '../../src/core/errors.js';
import { addClient, pkcePair, REDIRECT } from '../helpers/fakes/fixtures.js';
import { testEngine, type TestEngine } from '../helpers/fakes/test-engine.js';

const OTHER = 'https://app.example/other';
const WITH_QUERY = 'https://app.example/callback?tenant=7';
const ATTACKER = 'https://attacker.example/callback';
const { challenge: CHALLENGE } = pkcePair();
const VERIFIER_LIKE = pkcePair().verifier;

type Query = Record<string, string | string[]>;

type Expected =
  /** An error page, never a redirect (RFC 6749 §4.1.2.1): the redirect URI is not verified. */
  | { page: string }
  /** An error sent to the verified redirect URI, with state (§4.1.2.1, §4.2.2.1). */
  | {
      redirect: OAuthErrorCode;
      description?: string;
      /** The state echoed; null when none may be. */
      state: string | null;
      mode?: 'query' | 'fragment';
      base?: string;
    }
  | { valid: Partial<Omit<AuthorizationRequest, 'client' | 'query'>> };

interface Row {
  name: string;
  query: Query;
  allowPlainPkce?: boolean;
  expected: Expected;
}

const UNREGISTERED = 'The return address (redirect_uri) is not one the application registered.';
/** A request that fails every later check at once: what is reported must be the earliest one. */
const ALL_WRONG = { response_type: 'id_token', scope: 'admin', code_challenge_method: 'S512', state: 's' };

// The rows follow the order of the checks in validateAuthorizationRequest: each group's first rows
// also break every later check, and the earlier check is the one answered.
const ROWS: Row[] = [
  // 1. The client
  {
    name: '1. client_id missing',
    query: { response_type: 'code', redirect_uri: REDIRECT },
    expected: { page: 'The request does not say which application it is for.' },
  },
  {
    name: '1. client_id empty counts as missing (RFC 6749 §3.1)',
    query: { client_id: '', redirect_uri: REDIRECT, ...ALL_WRONG },
    expected: { page: 'The request does not say which application it is for.' },
  },
  {
    name: '1. client_id repeated',
    query: { client_id: ['conf', 'conf'], redirect_uri: REDIRECT, response_type: 'code' },
    expected: { page: 'client_id was sent more than once.' },
  },
  {
    name: '1. an unknown client, whatever else is wrong',
    query: { client_id: 'no-such-client', redirect_uri: ATTACKER, ...ALL_WRONG },
    expected: { page: 'The application is not registered here.' },
  },
  // 2. The redirect URI: exact match (RFC 6749 §3.1.2.3, RFC 9700 §4.1.3)
  {
    name: '2. an unregistered redirect_uri, whatever else is wrong: never redirected to',
    query: { client_id: 'conf', redirect_uri: ATTACKER, ...ALL_WRONG },
    expected: { page: UNREGISTERED },
  },
  ...[
    `${REDIRECT}/`,
    `${REDIRECT}?x=1`,
    'https://APP.example/callback',
    `${REDIRECT}#frag`,
    'http://app.example/callback',
  ].map((uri): Row => ({
    name: `2. a redirect_uri that is not exactly a registered one: ${uri}`,
    query: { client_id: 'conf', redirect_uri: uri, response_type: 'code', state: 's' },
    expected: { page: UNREGISTERED },
  })),
  {
    name: '2. redirect_uri repeated',
    query: { client_id: 'two', redirect_uri: [REDIRECT, REDIRECT], response_type: 'code' },
    expected: { page: 'redirect_uri was sent more than once.' },
  },
  {
    name: '2. redirect_uri omitted while two are registered',
    query: { client_id: 'two', ...ALL_WRONG },
    expected: { page: 'The request must say where to return to (redirect_uri), and it did not.' },
  },
  {
    name: '2. redirect_uri omitted while one is registered: that one',
    query: { client_id: 'conf', response_type: 'code' },
    expected: { valid: { redirectUri: REDIRECT } },
  },
  // 3. No parameter more than once (§3.1); state within bounds
  {
    name: '3. a repeated parameter, answered at the verified redirect URI with the state',
    query: { client_id: 'conf', redirect_uri: REDIRECT, ...ALL_WRONG, scope: ['read', 'write'] },
    expected: { redirect: 'invalid_request', description: 'parameter repeated: scope', state: 's' },
  },
  {
    name: '3. a repeated state: which one would be echoed? None',
    query: { client_id: 'conf', response_type: 'code', state: ['a', 'b'] },
    expected: { redirect: 'invalid_request', description: 'parameter repeated: state', state: null },
  },
  {
    name: '3. a state over 2048 characters',
    query: { client_id: 'conf', ...ALL_WRONG, state: 'x'.repeat(2049) },
    expected: {
      redirect: 'invalid_request',
      description: 'state is longer than 2048 characters',
      state: 'x'.repeat(2049),
    },
  },
  {
    name: '3. a state of 2048 characters',
    query: { client_id: 'conf', response_type: 'code', state: 'x'.repeat(2048) },
    expected: { valid: { state: 'x'.repeat(2048) } },
  },
  // 4. The response type, and whether the client may use it
  {
    name: '4. response_type missing',
    query: { client_id: 'conf', redirect_uri: REDIRECT, ...ALL_WRONG, response_type: '' },
    expected: { redirect: 'invalid_request', description: 'response_type is required', state: 's' },
  },
  {
    name: '4. an unsupported response_type',
    query: { client_id: 'conf', redirect_uri: REDIRECT, ...ALL_WRONG },
    expected: {
      redirect: 'unsupported_response_type',
      description: 'response_type must be code or token',
      state: 's',
    },
  },
  {
    name: '4. a combined response_type',
    query: { client_id: 'conf', response_type: 'code token', state: 's' },
    expected: { redirect: 'unsupported_response_type', state: 's' },
  },
  {
    name: '4. token for a client without the implicit grant: in the fragment (§4.2.2.1)',
    query: { client_id: 'conf', ...ALL_WRONG, response_type: 'token' },
    expected: {
      redirect: 'unauthorized_client',
      description: 'this client is not registered for the implicit grant',
      state: 's',
      mode: 'fragment',
    },
  },
  {
    name: '4. code for a client with only the implicit grant',
    query: { client_id: 'implicit', ...ALL_WRONG, response_type: 'code' },
    expected: {
      redirect: 'unauthorized_client',
      description: 'this client is not registered for the authorization_code grant',
      state: 's',
    },
  },
  // 5. The scope: only what the client is registered for (§3.3)
  {
    name: '5. a scope outside the client’s, with a bad PKCE method too',
    query: { client_id: 'conf', ...ALL_WRONG, response_type: 'code', scope: 'read admin' },
    expected: {
      redirect: 'invalid_scope',
      description: 'scope not allowed for this client: admin',
      state: 's',
    },
  },
  {
    name: '5. a malformed scope',
    query: { client_id: 'conf', response_type: 'code', scope: 'read "x"', state: 's' },
    expected: { redirect: 'invalid_scope', description: 'malformed scope name', state: 's' },
  },
  {
    name: '5. an implicit request’s scope error goes in the fragment',
    query: { client_id: 'implicit', response_type: 'token', scope: 'nope', state: 'g' },
    expected: { redirect: 'invalid_scope', state: 'g', mode: 'fragment' },
  },
  {
    name: '5. the query a redirect URI was registered with is kept (§3.1.2)',
    query: { client_id: 'tenant', response_type: 'code', scope: 'write', state: 'q' },
    expected: { redirect: 'invalid_scope', state: 'q', base: WITH_QUERY },
  },
  // 6. PKCE (RFC 7636 §4.3, §4.4.1; RFC 9700 §2.1.1)
  {
    name: '6. a public client without a code_challenge',
    query: { client_id: 'pub', response_type: 'code', state: 'p' },
    expected: {
      redirect: 'invalid_request',
      description: 'public clients must send a code_challenge (S256)',
      state: 'p',
    },
  },
  {
    name: '6. code_challenge_method without code_challenge',
    query: { client_id: 'conf', response_type: 'code', code_challenge_method: 'S256', state: 'p' },
    expected: {
      redirect: 'invalid_request',
      description: 'code_challenge_method without code_challenge',
      state: 'p',
    },
  },
  {
    name: '6. plain, when it is not allowed',
    query: {
      client_id: 'pub',
      response_type: 'code',
      code_challenge: VERIFIER_LIKE,
      code_challenge_method: 'plain',
      state: 'p',
    },
    expected: { redirect: 'invalid_request', description: 'code_challenge_method must be S256', state: 'p' },
  },
  {
    name: '6. plain by default (no method, §4.3), when it is not allowed',
    query: { client_id: 'pub', response_type: 'code', code_challenge: VERIFIER_LIKE, state: 'p' },
    expected: { redirect: 'invalid_request', description: 'code_challenge_method must be S256', state: 'p' },
  },
  {
    name: '6. an unknown method',
    query: {
      client_id: 'pub',
      response_type: 'code',
      code_challenge: CHALLENGE,
      code_challenge_method: 'S512',
      state: 'p',
    },
    expected: { redirect: 'invalid_request', description: 'code_challenge_method must be S256', state: 'p' },
  },
  {
    name: '6. the method name is case-sensitive',
    query: {
      client_id: 'pub',
      response_type: 'code',
      code_challenge: CHALLENGE,
      code_challenge_method: 's256',
      state: 'p',
    },
    expected: { redirect: 'invalid_request', description: 'code_challenge_method must be S256', state: 'p' },
  },
  {
    name: '6. a malformed S256 challenge',
    query: {
      client_id: 'pub',
      response_type: 'code',
      code_challenge: 'too-short',
      code_challenge_method: 'S256',
      state: 'p',
    },
    expected: { redirect: 'invalid_request', description: 'malformed code_challenge', state: 'p' },
  },
  {
    name: '6. plain, where the operator allows it',
    allowPlainPkce: true,
    query: {
      client_id: 'pub',
      response_type: 'code',
      code_challenge: VERIFIER_LIKE,
      code_challenge_method: 'plain',
    },
    expected: { valid: { codeChallenge: VERIFIER_LIKE, codeChallengeMethod: 'plain' } },
  },
  {
    name: '6. plain by default, where the operator allows it',
    allowPlainPkce: true,
    query: { client_id: 'pub', response_type: 'code', code_challenge: VERIFIER_LIKE },
    expected: { valid: { codeChallenge: VERIFIER_LIKE, codeChallengeMethod: 'plain' } },
  },
  {
    name: '6. a malformed plain challenge, where plain is allowed',
    allowPlainPkce: true,
    query: {
      client_id: 'pub',
      response_type: 'code',
      code_challenge: 'a'.repeat(42),
      code_challenge_method: 'plain',
      state: 'p',
    },
    expected: { redirect: 'invalid_request', description: 'malformed code_challenge', state: 'p' },
  },
  // Valid requests
  {
    name: 'valid: a confidential client without PKCE, every registered scope by default',
    query: { client_id: 'conf', redirect_uri: REDIRECT, response_type: 'code', state: 'st 1/2' },
    expected: {
      valid: {
        responseType: 'code',
        redirectUri: REDIRECT,
        scope: ['read', 'write'],
        state: 'st 1/2',
        codeChallenge: null,
        codeChallengeMethod: null,
        forceConsent: false,
      },
    },
  },
  {
    name: 'valid: a public client with S256',
    query: {
      client_id: 'pub',
      response_type: 'code',
      code_challenge: CHALLENGE,
      code_challenge_method: 'S256',
    },
    expected: {
      valid: { scope: ['read'], codeChallenge: CHALLENGE, codeChallengeMethod: 'S256', state: undefined },
    },
  },
  {
    name: 'valid: a narrower scope',
    query: { client_id: 'conf', response_type: 'code', scope: 'write' },
    expected: { valid: { scope: ['write'] } },
  },
  {
    name: 'valid: an empty scope counts as omitted',
    query: { client_id: 'conf', response_type: 'code', scope: '' },
    expected: { valid: { scope: ['read', 'write'] } },
  },
  {
    name: 'valid: the implicit flow ignores PKCE parameters',
    query: {
      client_id: 'implicit',
      response_type: 'token',
      code_challenge: 'junk',
      code_challenge_method: 'S512',
    },
    expected: { valid: { responseType: 'token', codeChallenge: null, codeChallengeMethod: null } },
  },
  // docs/decisions.md, decision 20 (RFC 9700 §4.11.2): a self-registered client chose its redirect
  // URIs unchecked; its malformed requests get a page, never a redirect to them.
  {
    name: 'self-registered: a response type it is not registered for is a page, not a redirect',
    query: { client_id: 'self', response_type: 'token', state: 's' },
    expected: {
      page: 'The application sent a request that cannot be answered: this client is not registered for the implicit grant (unauthorized_client).',
    },
  },
  {
    name: 'self-registered: an unknown response type is a page',
    query: { client_id: 'self', response_type: 'junk' },
    expected: {
      page: 'The application sent a request that cannot be answered: response_type must be code or token (unsupported_response_type).',
    },
  },
  {
    name: 'self-registered: a public client without PKCE is a page',
    query: { client_id: 'self', response_type: 'code', state: 's' },
    expected: {
      page: 'The application sent a request that cannot be answered: public clients must send a code_challenge (S256) (invalid_request).',
    },
  },
  {
    name: 'valid: a self-registered client’s well-formed request',
    query: {
      client_id: 'self',
      response_type: 'code',
      code_challenge: CHALLENGE,
      code_challenge_method: 'S256',
    },
    expected: { valid: { scope: ['read'], codeChallenge: CHALLENGE } },
  },
  {
    name: 'valid: prompt=consent asks for the consent page again',
    query: { client_id: 'conf', response_type: 'code', prompt: 'login consent' },
    expected: { valid: { forceConsent: true } },
  },
];

async function engineWithClients(allowPlainPkce: boolean): Promise<TestEngine> {
  const engine = await testEngine({ allowPlainPkce });
  const code: { grantTypes: ['authorization_code', 'refresh_token'] } = {
    grantTypes: ['authorization_code', 'refresh_token'],
  };
  await addClient(engine, { id: 'conf', ...code, scopes: ['read', 'write'] });
  await addClient(engine, { id: 'pub', ...code, scopes: ['read'], isPublic: true });
  await addClient(engine, { id: 'implicit', grantTypes: ['implicit'], scopes: ['read'] });
  await addClient(engine, { id: 'two', ...code, redirectUris: [REDIRECT, OTHER], scopes: ['read'] });
  await addClient(engine, { id: 'tenant', ...code, redirectUris: [WITH_QUERY], scopes: ['read'] });
  await addClient(engine, { id: 'self', ...code, scopes: ['read'], isPublic: true, registration: 'open' });
  return engine;
}

function queryString(query: Query): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    for (const item of Array.isArray(value) ? value : [value]) params.append(name, item);
  }
  return params.toString();
}

describe('authorization request validation, in the order of its checks (RFC 6749 §4.1.2.1)', () => {
  for (const row of ROWS) {
    it(row.name, async () => {
      const engine = await engineWithClients(row.allowPlainPkce ?? false);
      try {
        const validation = await engine.validateAuthorization(queryString(row.query));
        const expected = row.expected;
        if ('page' in expected) {
          assert.deepEqual(validation, { outcome: 'error-page', description: expected.page });
        } else if ('redirect' in expected) {
          assert.equal(validation.outcome, 'error-redirect', JSON.stringify(validation));
          if (validation.outcome !== 'error-redirect') return;
          assert.equal(validation.error, expected.redirect);
          const location = new URL(responseLocation(validation.response));
          const base = new URL(expected.base ?? REDIRECT);
          assert.equal(location.origin + location.pathname, base.origin + base.pathname);
          const fragment = expected.mode === 'fragment';
          const params = fragment ? new URLSearchParams(location.hash.slice(1)) : location.searchParams;
          // The registered URI's own query is kept; the response goes only where its mode puts it.
          if (fragment) assert.equal(location.search, base.search);
          else assert.equal(location.hash, '');
          for (const [name, value] of base.searchParams) assert.equal(location.searchParams.get(name), value);
          assert.equal(params.get('error'), expected.redirect);
          const description = params.get('error_description') ?? '';
          if (expected.description !== undefined) assert.equal(description, expected.description);
          else assert.ok(description.length > 0);
          assert.equal(params.get('state'), expected.state);
        } else {
          assert.equal(validation.outcome, 'valid', JSON.stringify(validation));
          if (validation.outcome !== 'valid') return;
          const { client, query, ...request } = validation.request;
          assert.equal(client.id, new URLSearchParams(queryString(row.query)).get('client_id'));
          assert.equal(typeof query, 'string');
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
});
