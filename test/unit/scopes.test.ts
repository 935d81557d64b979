import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { responseLocation } from '../../src/core/authorize/response.js';
import { OAuthError, type OAuthErrorCode } from '../../src/core/errors.js';
import { parseScope, resolveScope } from '../../src/core/scopes/scopes.js';
import {
  addClient,
  addUser,
  expectOAuthError,
  PASSWORD,
  REDIRECT,
  withBasic,
} from '../helpers/fakes/fixtures.js';
import { testEngine, type TestEngine } from '../helpers/fakes/test-engine.js';

const REGISTERED = ['read', 'write'];

describe('scope parameter (RFC 6749 §3.3)', () => {
  const rows: {
    name: string;
    value: string | undefined;
    expected: string[] | undefined | 'invalid_scope';
  }[] = [
    { name: 'absent', value: undefined, expected: undefined },
    { name: 'empty', value: '', expected: [] },
    { name: 'one name', value: 'read', expected: ['read'] },
    { name: 'space-delimited, in the order given', value: 'write read', expected: ['write', 'read'] },
    { name: 'repeated names once', value: 'read write read', expected: ['read', 'write'] },
    { name: 'extra spaces ignored', value: ' read  write ', expected: ['read', 'write'] },
    { name: 'every printable character but " and \\', value: '!#[]~:/', expected: ['!#[]~:/'] },
    { name: 'a double quote is not a scope-token character', value: 'read "x"', expected: 'invalid_scope' },
    { name: 'a backslash is not either', value: 'a\\b', expected: 'invalid_scope' },
    { name: 'non-ASCII is not either', value: 'lecture-é', expected: 'invalid_scope' },
    { name: 'a tab is no delimiter', value: 'read\twrite', expected: 'invalid_scope' },
  ];
  for (const row of rows) {
    it(row.name, () => {
      if (row.expected === 'invalid_scope') {
        assert.throws(
          () => parseScope(row.value),
          (error) => error instanceof OAuthError && error.code === 'invalid_scope' && error.status === 400,
        );
      } else {
        assert.deepEqual(parseScope(row.value), row.expected);
      }
    });
  }
});

describe('requested against registered scopes (resolveScope)', () => {
  const rows: { name: string; requested: string[] | undefined; expected: string[] | RegExp }[] = [
    {
      name: 'nothing requested: every registered scope (the default)',
      requested: undefined,
      expected: REGISTERED,
    },
    { name: 'an empty request: every registered scope', requested: [], expected: REGISTERED },
    { name: 'a narrower request: what was requested', requested: ['write'], expected: ['write'] },
    {
      name: 'all of them, in the order requested',
      requested: ['write', 'read'],
      expected: ['write', 'read'],
    },
    {
      name: 'an unknown scope: invalid_scope naming it',
      requested: ['admin'],
      expected: /^scope not allowed for this client: admin$/,
    },
    {
      name: 'one unknown among known ones: invalid_scope naming only the unknown',
      requested: ['read', 'admin', 'delete'],
      expected: /^scope not allowed for this client: admin delete$/,
    },
  ];
  for (const row of rows) {
    it(row.name, () => {
      if (row.expected instanceof RegExp) {
        const pattern = row.expected;
        assert.throws(
          () => resolveScope(row.requested, REGISTERED),
          (error) =>
            error instanceof OAuthError && error.code === 'invalid_scope' && pattern.test(error.description),
        );
      } else {
        assert.deepEqual(resolveScope(row.requested, REGISTERED), row.expected);
      }
    });
  }

  it('answers a client with no registered scopes with an empty scope', () => {
    assert.deepEqual(resolveScope(undefined, []), []);
  });
});

type Outcome = { scope: string[] } | { error: OAuthErrorCode };

/** The places a request's scope is resolved against the client's: each returns the scope it granted. */
const SURFACES: Record<string, (engine: TestEngine, scope: string | undefined) => Promise<Outcome>> = {
  async client_credentials(engine, scope) {
    const { client, secret } = await addClient(engine, {
      grantTypes: ['client_credentials'],
      scopes: REGISTERED,
    });
    return tokenOutcome(engine.token(withBasic(client, secret, { grant_type: 'client_credentials', scope })));
  },
  async password(engine, scope) {
    const { client, secret } = await addClient(engine, { grantTypes: ['password'], scopes: REGISTERED });
    const user = await addUser(engine);
    return tokenOutcome(
      engine.token(
        withBasic(client, secret, {
          grant_type: 'password',
          username: user.username,
          password: PASSWORD,
          scope,
        }),
      ),
    );
  },
  async authorize(engine, scope) {
    const { client } = await addClient(engine, { scopes: REGISTERED });
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: client.id,
      redirect_uri: REDIRECT,
    });
    if (scope !== undefined) query.set('scope', scope);
    const validation = await engine.validateAuthorization(query.toString());
    if (validation.outcome === 'valid') return { scope: validation.request.scope };
    assert.equal(validation.outcome, 'error-redirect');
    return { error: validation.outcome === 'error-redirect' ? validation.error : 'server_error' };
  },
};

async function tokenOutcome(response: Promise<{ scope?: string }>): Promise<Outcome> {
  try {
    const body = await response;
    return { scope: body.scope === undefined ? [] : body.scope.split(' ') };
  } catch (error) {
    if (!(error instanceof OAuthError)) throw error;
    // Every invalid_scope at the token endpoint is a 400 (RFC 6749 §5.2).
    assert.equal(error.status, 400);
    return { error: error.code };
  }
}

describe('every place a requested scope is resolved', () => {
  const rows: { name: string; scope: string | undefined; expected: Outcome }[] = [
    { name: 'omitted: defaults to the registered scopes', scope: undefined, expected: { scope: REGISTERED } },
    { name: 'empty: defaults to the registered scopes', scope: '', expected: { scope: REGISTERED } },
    { name: 'narrowed', scope: 'write', expected: { scope: ['write'] } },
    { name: 'unknown to the client', scope: 'admin', expected: { error: 'invalid_scope' } },
    { name: 'partly unknown', scope: 'read admin', expected: { error: 'invalid_scope' } },
    { name: 'malformed', scope: 'read "write"', expected: { error: 'invalid_scope' } },
  ];
  for (const [surface, resolve] of Object.entries(SURFACES)) {
    describe(surface, () => {
      for (const row of rows) {
        it(row.name, async () => {
          const engine = await testEngine();
          try {
            assert.deepEqual(await resolve(engine, row.scope), row.expected);
          } finally {
            await engine.close();
          }
        });
      }
    });
  }
});

describe('the consent page may only narrow the request (RFC 6749 §3.3)', () => {
  it('issues a code for the scopes left ticked, and refuses a widened decision', async () => {
    const engine = await testEngine();
    const { client, secret } = await addClient(engine, { scopes: REGISTERED });
    const user = await addUser(engine);
    const validation = await engine.validateAuthorization(
      new URLSearchParams({ response_type: 'code', client_id: client.id, scope: 'read' }).toString(),
    );
    assert.equal(validation.outcome, 'valid');
    if (validation.outcome !== 'valid') return;
    await assert.rejects(
      engine.authorization.approve(validation.request, user.id, { scope: ['read', 'write'], lifetime: null }),
      /consent widened the requested scope/,
    );
    const location = new URL(
      responseLocation(
        await engine.authorization.approve(validation.request, user.id, { scope: ['read'], lifetime: null }),
      ),
    );
    const code = location.searchParams.get('code') ?? '';
    const body = await engine.token(
      withBasic(client, secret, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT }),
    );
    assert.equal(body.scope, 'read');
    await expectOAuthError(
      engine.token(
        withBasic(client, secret, {
          grant_type: 'refresh_token',
          refresh_token: body.refresh_token,
          scope: 'write',
        }),
      ),
      { code: 'invalid_scope', status: 400, description: 'scope exceeds the original grant' },
    );
    await engine.close();
  });
});
