import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PushedRequestSpentError } from '../../src/core/authorize/authorization-service.js';
import {
  PUSHED_REQUEST_FLOW_SECONDS,
  PUSHED_REQUEST_URI_PREFIX,
} from '../../src/core/authorize/pushed-requests.js';
import type { AuthorizationRequest, AuthorizationValidation } from '../../src/core/authorize/request.js';
import { responseLocation } from '../../src/core/authorize/response.js';
import type { OAuthErrorCode } from '../../src/core/errors.js';
import type { Client, PushedAuthorizationRequest, User } from '../../src/core/model.js';
import { sha256 } from '../../src/shared/crypto.js';
import { addClient, addUser, expectOAuthError, pkcePair, REDIRECT } from '../helpers/fakes/fixtures.js';
import { testEngine, type TestEngine } from '../helpers/fakes/test-engine.js';

// RFC 9126 through the engine's public entry points (AuthorizationService.push, validate, next,
// approve, deny) on the in-memory fakes and a manual clock.

const ATTACKER = 'https://attacker.example/callback';
const { challenge: CHALLENGE } = pkcePair();
const CODE_REQUEST = {
  response_type: 'code',
  scope: 'read',
  state: 's',
  code_challenge: CHALLENGE,
  code_challenge_method: 'S256',
};

/** Records what the engine stores through the port while `body` runs. */
async function capturingInserts(
  engine: TestEngine,
  body: () => Promise<void>,
): Promise<PushedAuthorizationRequest[]> {
  const store = engine.storage.pushedRequests;
  const insert = store.insert.bind(store);
  const inserted: PushedAuthorizationRequest[] = [];
  store.insert = async (request) => {
    inserted.push(structuredClone(request));
    return insert(request);
  };
  try {
    await body();
  } finally {
    store.insert = insert;
  }
  return inserted;
}

function query(params: Record<string, string>): string {
  return new URLSearchParams(params).toString();
}

function authorizeQuery(client: Client, requestUri: string, extra: Record<string, string> = {}): string {
  return query({ client_id: client.id, request_uri: requestUri, ...extra });
}

function valid(validation: AuthorizationValidation): AuthorizationRequest {
  assert.equal(validation.outcome, 'valid', JSON.stringify(validation));
  if (validation.outcome !== 'valid') throw new Error('unreachable');
  return validation.request;
}

const EXPIRED_OR_USED =
  'This request has expired or was already used. Return to the application and start again.';

function expectPage(validation: AuthorizationValidation, description = EXPIRED_OR_USED): void {
  assert.deepEqual(validation, { outcome: 'error-page', description });
}

function expectRedirect(validation: AuthorizationValidation, error: OAuthErrorCode, state: string | null) {
  assert.equal(validation.outcome, 'error-redirect', JSON.stringify(validation));
  if (validation.outcome !== 'error-redirect') return;
  const location = new URL(responseLocation(validation.response));
  assert.equal(`${location.origin}${location.pathname}`, REDIRECT);
  assert.equal(location.searchParams.get('error'), error);
  assert.equal(location.searchParams.get('state'), state);
}

describe('RFC 9126 pushed authorization requests (engine)', () => {
  let engine: TestEngine;
  let user: User;
  before(async () => {
    engine = await testEngine();
    user = await addUser(engine);
  });
  after(async () => {
    await engine?.close();
  });

  const confidential = async (fields: Partial<Client> = {}) => (await addClient(engine, fields)).client;
  const approve = (request: AuthorizationRequest) =>
    engine.authorization.approve(request, user.id, { scope: request.scope, lifetime: 3600 });

  describe('POST /par: the request is checked exactly as /authorize checks it (§2.1)', () => {
    interface PushRow {
      name: string;
      client?: Partial<Client>;
      body: Record<string, string | string[]>;
      expected: { code: OAuthErrorCode; description?: string | RegExp };
    }
    const ROWS: PushRow[] = [
      {
        name: 'a request_uri inside a pushed request',
        body: { ...CODE_REQUEST, request_uri: `${PUSHED_REQUEST_URI_PREFIX}abc` },
        expected: {
          code: 'invalid_request',
          description: 'request_uri must not be sent in a pushed request',
        },
      },
      {
        name: 'an unregistered redirect_uri: invalid_request, nothing redirected anywhere',
        body: { ...CODE_REQUEST, redirect_uri: ATTACKER },
        expected: {
          code: 'invalid_request',
          description: 'The return address (redirect_uri) is not one the application registered.',
        },
      },
      {
        name: 'a scope the client was not registered with',
        body: { ...CODE_REQUEST, scope: 'admin' },
        expected: { code: 'invalid_scope' },
      },
      {
        name: 'an unknown response_type',
        body: { ...CODE_REQUEST, response_type: 'id_token' },
        expected: { code: 'unsupported_response_type' },
      },
      {
        name: 'no response_type',
        body: { scope: 'read', code_challenge: CHALLENGE, code_challenge_method: 'S256' },
        expected: { code: 'invalid_request', description: 'response_type is required' },
      },
      {
        name: 'a response type the client is not registered for',
        client: { grantTypes: ['client_credentials'] },
        body: CODE_REQUEST,
        expected: { code: 'unauthorized_client' },
      },
      {
        // Decision 20: a self-registered client's errors are pages at /authorize; here nothing is
        // redirected, so it is answered with its error code like any other client.
        name: 'a self-registered client asking for a response type it is not registered for',
        client: { grantTypes: ['client_credentials'], registration: 'open' },
        body: CODE_REQUEST,
        expected: { code: 'unauthorized_client' },
      },
      {
        name: 'a public client without PKCE',
        client: { isPublic: true },
        body: { response_type: 'code', scope: 'read' },
        expected: {
          code: 'invalid_request',
          description: 'public clients must send a code_challenge (S256)',
        },
      },
      {
        name: 'a repeated parameter',
        body: { ...CODE_REQUEST, scope: ['read', 'write'] },
        expected: { code: 'invalid_request', description: 'parameter repeated: scope' },
      },
      {
        name: 'client_id naming another client than the authenticated one',
        body: { ...CODE_REQUEST, client_id: 'someone-else' },
        expected: {
          code: 'invalid_request',
          description: 'client_id does not match the authenticated client',
        },
      },
      {
        name: 'an OpenID Connect request object',
        body: { ...CODE_REQUEST, scope: 'openid read', redirect_uri: REDIRECT, request: 'eyJ.x.y' },
        expected: { code: 'request_not_supported' },
      },
    ];
    for (const row of ROWS) {
      it(`${row.name}: 400 ${row.expected.code}, nothing stored`, async () => {
        const client = await confidential({ scopes: ['read', 'write', 'openid'], ...row.client });
        const params = new URLSearchParams();
        for (const [name, value] of Object.entries(row.body)) {
          for (const item of Array.isArray(value) ? value : [value]) params.append(name, item);
        }
        const inserted = await capturingInserts(engine, async () => {
          await expectOAuthError(engine.authorization.push(client, params.toString()), {
            code: row.expected.code,
            status: 400,
            ...(row.expected.description !== undefined ? { description: row.expected.description } : {}),
          });
        });
        assert.deepEqual(inserted, []);
      });
    }

    it('a valid request: a request_uri of the RFC form with 256 random bits, expires_in 60, stored by hash without the credentials', async () => {
      const client = await confidential();
      let pushed = { request_uri: '', expires_in: 0 };
      const [stored, ...more] = await capturingInserts(engine, async () => {
        pushed = await engine.authorization.push(
          client,
          query({ ...CODE_REQUEST, client_id: client.id, client_secret: `secret-of-${client.id}` }),
        );
      });
      assert.equal(more.length, 0);
      assert.equal(pushed.expires_in, 60);
      assert.match(pushed.request_uri, /^urn:ietf:params:oauth:request_uri:[A-Za-z0-9_-]{43}$/);
      assert.ok(stored);
      // Only the hash of the random part: the store never holds what opens the request.
      assert.equal(stored.hash, sha256(pushed.request_uri.slice(PUSHED_REQUEST_URI_PREFIX.length)));
      assert.ok(!JSON.stringify(stored).includes(pushed.request_uri.slice(PUSHED_REQUEST_URI_PREFIX.length)));
      assert.equal(stored.clientId, client.id);
      assert.deepEqual([stored.openedAt, stored.consumedAt], [null, null]);
      assert.equal(stored.expiresAt, engine.clock.now() + 60);
      const params = new URLSearchParams(stored.params);
      assert.equal(params.get('client_secret'), null);
      assert.equal(params.get('client_id'), client.id);
      assert.equal(params.get('code_challenge'), CHALLENGE);
    });

    it('the lifetime is policy: pushedAuthorizationRequestTtl', async () => {
      const short = await testEngine({ pushedAuthorizationRequestTtl: 10 });
      try {
        const { client } = await addClient(short);
        assert.equal((await short.authorization.push(client, query(CODE_REQUEST))).expires_in, 10);
      } finally {
        await short.close();
      }
    });
  });

  describe('/authorize with a request_uri (§4)', () => {
    it('uses the pushed parameters and ignores every other one of the URL; the request carries only client_id and request_uri', async () => {
      const client = await confidential();
      const { request_uri } = await engine.authorization.push(client, query(CODE_REQUEST));
      const request = valid(
        await engine.authorization.validate(
          authorizeQuery(client, request_uri, { redirect_uri: ATTACKER, scope: 'write', state: 'other' }),
        ),
      );
      assert.equal(request.redirectUri, REDIRECT);
      assert.deepEqual(request.scope, ['read']);
      assert.equal(request.state, 's');
      assert.equal(request.codeChallenge, CHALLENGE);
      assert.equal(request.query, authorizeQuery(client, request_uri));
      assert.notEqual(request.pushedRequest, null);
    });

    interface RefusedRow {
      name: string;
      uri: (pushed: string, client: Client) => Promise<{ query: string }>;
    }
    const REFUSED: RefusedRow[] = [
      {
        name: 'another client’s request_uri',
        uri: async (pushed) => ({ query: authorizeQuery(await confidential(), pushed) }),
      },
      {
        name: 'an unknown request_uri of the right form',
        uri: async (_pushed, client) => ({
          query: authorizeQuery(client, `${PUSHED_REQUEST_URI_PREFIX}${'A'.repeat(43)}`),
        }),
      },
      {
        name: 'a request_uri of the prefix with a malformed random part',
        uri: async (pushed, client) => ({ query: authorizeQuery(client, `${pushed}x`) }),
      },
      {
        name: 'expired: 60 seconds after the push, never opened',
        uri: async (pushed, client) => {
          engine.clock.advance(60);
          return { query: authorizeQuery(client, pushed) };
        },
      },
    ];
    for (const row of REFUSED) {
      it(`${row.name}: an error page, no redirect`, async () => {
        const client = await confidential();
        const { request_uri } = await engine.authorization.push(client, query(CODE_REQUEST));
        const { query: q } = await row.uri(request_uri, client);
        expectPage(await engine.authorization.validate(q));
      });
    }

    it('59 seconds after the push it opens, and then lasts the sign-in’s half hour, not the minute', async () => {
      const client = await confidential();
      const { request_uri } = await engine.authorization.push(client, query(CODE_REQUEST));
      engine.clock.advance(59);
      valid(await engine.authorization.validate(authorizeQuery(client, request_uri)));
      engine.clock.advance(PUSHED_REQUEST_FLOW_SECONDS - 1);
      // Sign-in and consent re-enter /authorize: the same request each time, the deadline unmoved.
      const request = valid(await engine.authorization.validate(authorizeQuery(client, request_uri)));
      engine.clock.advance(1);
      expectPage(await engine.authorization.validate(authorizeQuery(client, request_uri)));
      await assert.rejects(approve(request), PushedRequestSpentError);
    });

    it('single use: the first answer consumes it; a replay gets an error page and no second code', async () => {
      const client = await confidential();
      const { request_uri } = await engine.authorization.push(client, query(CODE_REQUEST));
      const request = valid(await engine.authorization.validate(authorizeQuery(client, request_uri)));
      // Reloads before the answer (the sign-in page, the consent page) still read it.
      valid(await engine.authorization.validate(authorizeQuery(client, request_uri)));
      const response = await approve(request);
      assert.ok(response.params.some(([name]) => name === 'code'));
      expectPage(await engine.authorization.validate(authorizeQuery(client, request_uri)));
      await assert.rejects(approve(request), PushedRequestSpentError);
      assert.equal(
        (await engine.storage.grants.listByUser(user.id)).filter((g) => g.clientId === client.id).length,
        1,
      );
    });

    it('single use under concurrency: of 10 approvals at once (two tabs, a double click) exactly one answers', async () => {
      const client = await confidential();
      const { request_uri } = await engine.authorization.push(client, query(CODE_REQUEST));
      const request = valid(await engine.authorization.validate(authorizeQuery(client, request_uri)));
      const results = await Promise.allSettled(Array.from({ length: 10 }, () => approve(request)));
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
      for (const result of results) {
        if (result.status === 'rejected') assert.ok(result.reason instanceof PushedRequestSpentError);
      }
    });

    it('Deny answers it too: consumed', async () => {
      const client = await confidential();
      const { request_uri } = await engine.authorization.push(client, query(CODE_REQUEST));
      const request = valid(await engine.authorization.validate(authorizeQuery(client, request_uri)));
      const response = await engine.authorization.deny(request);
      assert.deepEqual(
        response.params.find(([name]) => name === 'error'),
        ['error', 'access_denied'],
      );
      expectPage(await engine.authorization.validate(authorizeQuery(client, request_uri)));
    });

    it('prompt=none answered with login_required consumes it', async () => {
      const client = await confidential({ scopes: ['openid', 'read'] });
      const { request_uri } = await engine.authorization.push(
        client,
        query({ ...CODE_REQUEST, scope: 'openid', redirect_uri: REDIRECT, prompt: 'none' }),
      );
      const request = valid(await engine.authorization.validate(authorizeQuery(client, request_uri)));
      const step = await engine.authorization.next(request, undefined);
      assert.equal(step.step, 'respond');
      expectPage(await engine.authorization.validate(authorizeQuery(client, request_uri)));
    });

    it('a pushed request no longer valid at /authorize (the client lost the scope) is answered by redirect and consumed', async () => {
      const client = await confidential();
      const { request_uri } = await engine.authorization.push(client, query(CODE_REQUEST));
      await engine.storage.clients.update({ ...client, scopes: ['write'] }, 'keep');
      expectRedirect(
        await engine.authorization.validate(authorizeQuery(client, request_uri)),
        'invalid_scope',
        's',
      );
      expectPage(await engine.authorization.validate(authorizeQuery(client, request_uri)));
    });

    it('deleting the client deletes its pushed requests', async () => {
      const client = await confidential();
      const { request_uri } = await engine.authorization.push(client, query(CODE_REQUEST));
      await engine.storage.clients.delete(client.id);
      await engine.storage.clients.insert(client);
      expectPage(await engine.authorization.validate(authorizeQuery(client, request_uri)));
    });

    for (const [kind, extra] of [
      ['an OAuth 2.0 request', {}],
      ['an OpenID Connect request', { scope: 'openid', redirect_uri: REDIRECT }],
    ] as const) {
      it(`${kind} with a request_uri not of the pushed form: request_uri_not_supported, by redirect`, async () => {
        const client = await confidential({ scopes: ['openid', 'read'] });
        const validation = await engine.authorization.validate(
          query({ client_id: client.id, ...CODE_REQUEST, ...extra, request_uri: 'https://rp.example/r.jwt' }),
        );
        expectRedirect(validation, 'request_uri_not_supported', 's');
      });
    }
  });

  describe('require_pushed_authorization_requests (§5, §6)', () => {
    it('a client that requires it: /authorize without a pushed request is invalid_request, by redirect; pushed, it passes', async () => {
      const client = await confidential({ requirePushedAuthorizationRequests: true });
      expectRedirect(
        await engine.authorization.validate(query({ client_id: client.id, ...CODE_REQUEST })),
        'invalid_request',
        's',
      );
      const { request_uri } = await engine.authorization.push(client, query(CODE_REQUEST));
      valid(await engine.authorization.validate(authorizeQuery(client, request_uri)));
    });

    it('a client that does not: both ways pass', async () => {
      const client = await confidential();
      valid(await engine.authorization.validate(query({ client_id: client.id, ...CODE_REQUEST })));
    });

    it('the server-wide setting holds every client to it', async () => {
      const strict = await testEngine({ requirePushedAuthorizationRequests: true });
      try {
        const { client } = await addClient(strict);
        expectRedirect(
          await strict.authorization.validate(query({ client_id: client.id, ...CODE_REQUEST })),
          'invalid_request',
          's',
        );
        const { request_uri } = await strict.authorization.push(client, query(CODE_REQUEST));
        valid(await strict.authorization.validate(authorizeQuery(client, request_uri)));
      } finally {
        await strict.close();
      }
    });
  });
});
