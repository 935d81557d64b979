import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { OAuthError } from '../../src/core/errors.js';
import { authorizationCodeGrant } from '../../src/core/token-endpoint/authorization-code.js';
import type { GrantContext } from '../../src/core/token-endpoint/grant-handler.js';
import type { AuthorizationCode, Client, Grant, User } from '../../src/core/model.js';
import type { Storage } from '../../src/core/ports.js';
import { ManualClock } from '../../src/shared/clock.js';
import { sha256 } from '../../src/shared/crypto.js';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const REDIRECT = 'https://app.example/callback';

/** The error a handler call ends in (it must end in one). */
async function refusal(promise: Promise<unknown>): Promise<OAuthError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof OAuthError, String(error));
    return error;
  }
  assert.fail('expected an OAuthError');
}

describe('authorization_code grant: client binding before replay (unit)', () => {
  const clock = new ManualClock(1_000_000);
  const grant: Grant = {
    id: 'g1',
    clientId: 'owner',
    userId: 'u1',
    scope: ['read'],
    createdAt: clock.now(),
    expiresAt: null,
    revokedAt: null,
  };
  const code: AuthorizationCode = {
    hash: sha256('ac_used'),
    clientId: 'owner',
    userId: 'u1',
    grantId: 'g1',
    redirectUri: REDIRECT,
    scope: ['read'],
    codeChallenge: null,
    codeChallengeMethod: null,
    createdAt: clock.now(),
    expiresAt: clock.now() + 600,
    consumedAt: clock.now(),
    nonce: null,
    authTime: null,
    sid: null,
    resources: [],
    dpopJkt: null,
  };
  const revoked: string[] = [];
  // Only what the handler reads before it refuses; anything else would throw.
  const storage = {
    codes: {
      getWithGrant: async (hash: string) => (hash === code.hash ? { code, grant } : undefined),
    },
    grants: {
      revoke: async (id: string) => {
        revoked.push(id);
      },
    },
  } as unknown as Storage;
  const context = { storage, clock } as unknown as GrantContext;
  const client = (id: string) => ({ id, isPublic: false, grantTypes: ['authorization_code'] }) as Client;
  const params = (value: string) => ({ code: value, redirect_uri: REDIRECT });

  it('answers a foreign used code exactly like an unknown one, and revokes nothing', async () => {
    const unknown = await refusal(
      authorizationCodeGrant.handle(
        {
          client: client('thief'),
          params: params('ac_nosuch'),
          address: '127.0.0.1',
          resources: [],
          dpop: undefined,
        },
        context,
      ),
    );
    const foreign = await refusal(
      authorizationCodeGrant.handle(
        {
          client: client('thief'),
          params: params('ac_used'),
          address: '127.0.0.1',
          resources: [],
          dpop: undefined,
        },
        context,
      ),
    );
    assert.equal(foreign.code, 'invalid_grant');
    assert.equal(foreign.description, unknown.description);
    assert.deepEqual(revoked, []);
  });

  it('revokes the grant when the owning client replays its code (RFC 6749 §4.1.2)', async () => {
    const replay = await refusal(
      authorizationCodeGrant.handle(
        {
          client: client('owner'),
          params: params('ac_used'),
          address: '127.0.0.1',
          resources: [],
          dpop: undefined,
        },
        context,
      ),
    );
    assert.equal(replay.code, 'invalid_grant');
    assert.deepEqual(revoked, ['g1']);
  });
});

for (const backend of backends()) {
  describe(`authorization_code grant: another client's code (${backend})`, () => {
    let server: TestServer;
    let user: User;
    before(async () => {
      server = await startTestServer(backend);
      ({ user } = await server.user());
    });
    after(async () => {
      await server.close();
    });

    const codeClient = () =>
      server.client({
        redirect_uris: [REDIRECT],
        grant_types: ['authorization_code', 'refresh_token'],
        scopes: ['read'],
      });
    const redeem = (code: string, credentials: { id: string; secret: string }) =>
      server.http.token({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT }, credentials);
    const description = (res: { status: number; json?: unknown }): unknown => {
      assert.equal(res.status, 400);
      const body = res.json as { error?: string; error_description?: string };
      assert.equal(body.error, 'invalid_grant');
      return body.error_description;
    };

    it("a used code presented by another client neither revokes the owner's grant nor tells it is valid", async () => {
      const owner = await codeClient();
      const thief = await codeClient();
      const thiefCredentials = { id: thief.client.id, secret: thief.secret };
      const { code, grant } = await server.seedCode({ client: owner.client, user });
      const unknown = description(await redeem('ac_nosuchcode', thiefCredentials));

      // Unused: the thief hears what it hears for a code that does not exist.
      assert.equal(description(await redeem(code, thiefCredentials)), unknown);
      const tokens = await redeem(code, { id: owner.client.id, secret: owner.secret });
      assert.equal(tokens.status, 200);
      const refreshToken = (tokens.json as { refresh_token: string }).refresh_token;

      // Used: the same answer, and the owner's grant stands.
      assert.equal(description(await redeem(code, thiefCredentials)), unknown);
      assert.equal((await server.store.storage.grants.get(grant.id))?.revokedAt, null);
      const refreshed = await server.http.token(
        { grant_type: 'refresh_token', refresh_token: refreshToken },
        { id: owner.client.id, secret: owner.secret },
      );
      assert.equal(refreshed.status, 200, refreshed.text);

      // The owner replaying its own code still revokes the grant.
      description(await redeem(code, { id: owner.client.id, secret: owner.secret }));
      assert.notEqual((await server.store.storage.grants.get(grant.id))?.revokedAt, null);
    });
  });
}
