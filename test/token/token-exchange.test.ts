import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { TOKEN_EXCHANGE_GRANT, type Client, type User } from '../../src/core/model.js';
import { backends } from '../helpers/backends.js';
import { basicAuth } from '../helpers/https-client.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { assertOAuthError, assertTokenSuccess, fetchJwks, ISSUER } from '../helpers/token-responses.js';

const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
const NEXT_SERVICE = 'https://next.example/api';

/**
 * RFC 8693 token exchange end to end: a user's access token exchanged by a downstream service for one
 * aimed at the next service (checked with jose against /jwks), its `act` at /introspect, the metadata,
 * and the exchanged token dying with the subject's grant (/introspect inactive, /v1 refusing it).
 */
for (const backend of backends()) {
  describe(`token exchange (${backend})`, () => {
    let server: TestServer;
    let app: { client: Client; secret: string };
    let service: { client: Client; secret: string };
    let user: User;

    before(async () => {
      server = await startTestServer(backend);
      await server.gatehouse.engine.resources.create({ uri: NEXT_SERVICE, scopes: ['read'] });
      app = await server.client({
        redirect_uris: ['https://app.example/cb'],
        grant_types: ['authorization_code'],
        scopes: ['read', 'profile'],
      });
      service = await server.client({
        grant_types: [TOKEN_EXCHANGE_GRANT],
        scopes: ['read', 'profile'],
        token_exchange_targets: [NEXT_SERVICE],
      });
      ({ user } = await server.user());
    });
    after(async () => {
      await server?.close();
    });

    const credentials = (party: { client: Client; secret: string }) => ({
      id: party.client.id,
      secret: party.secret,
    });

    /** A user's access token for Gatehouse's own API, by the code grant; and its grant id. */
    async function userToken(): Promise<{ token: string; grantId: string }> {
      const { code, grant } = await server.seedCode({ client: app.client, user, scope: ['read', 'profile'] });
      const body = assertTokenSuccess(
        await server.http.token(
          { grant_type: 'authorization_code', code, redirect_uri: 'https://app.example/cb' },
          credentials(app),
        ),
      );
      return { token: body.access_token, grantId: grant.id };
    }

    const introspect = async (token: string) => {
      const res = await server.http.request('/introspect', {
        form: { token },
        headers: { authorization: basicAuth(service.client.id, service.secret) },
      });
      assert.equal(res.status, 200, res.text);
      return res.json as Record<string, unknown>;
    };

    it('advertises the grant type', async () => {
      const res = await server.http.request('/.well-known/oauth-authorization-server');
      assert.ok(
        (res.json as { grant_types_supported: string[] }).grant_types_supported.includes(
          TOKEN_EXCHANGE_GRANT,
        ),
      );
    });

    it('exchanges a user’s token for one for the next service; the grant’s revocation ends both', async () => {
      const { token, grantId } = await userToken();
      const res = await server.http.token(
        {
          grant_type: TOKEN_EXCHANGE_GRANT,
          subject_token: token,
          subject_token_type: ACCESS_TOKEN_TYPE,
          audience: NEXT_SERVICE,
          scope: 'read',
        },
        credentials(service),
      );
      const body = assertTokenSuccess(res) as ReturnType<typeof assertTokenSuccess> & {
        issued_token_type?: string;
      };
      assert.equal(body.issued_token_type, ACCESS_TOKEN_TYPE);
      assert.equal(body.token_type, 'bearer');
      assert.equal(body.refresh_token, undefined);
      const { payload } = await jwtVerify(body.access_token, createLocalJWKSet(await fetchJwks(server)), {
        issuer: ISSUER,
        audience: NEXT_SERVICE,
        typ: 'at+jwt',
        currentDate: new Date(server.clock.now() * 1000),
      });
      assert.equal(payload.sub, user.id);
      assert.equal(payload.scope, 'read');
      assert.equal(payload.client_id, service.client.id);
      assert.deepEqual(payload.act, { sub: service.client.id });
      assert.equal(payload.gid, grantId);

      const live = await introspect(body.access_token);
      assert.equal(live.active, true);
      assert.deepEqual(live.act, { sub: service.client.id });

      // An exchange for Gatehouse's own API, to see /v1 accept and then refuse it.
      const forApi = assertTokenSuccess(
        await server.http.token(
          {
            grant_type: TOKEN_EXCHANGE_GRANT,
            subject_token: token,
            subject_token_type: ACCESS_TOKEN_TYPE,
            scope: 'profile',
          },
          credentials(service),
        ),
      );
      const me = () =>
        server.http.request('/v1/users/me', { headers: { authorization: `Bearer ${forApi.access_token}` } });
      const before = await me();
      assert.equal(before.status, 200, before.text);
      assert.equal((before.json as { id: string }).id, user.id);

      assert.ok(await server.gatehouse.engine.grants.revokeStanding(grantId));
      assert.deepEqual(await introspect(body.access_token), { active: false });
      assert.deepEqual(await introspect(forApi.access_token), { active: false });
      const refused = await me();
      assert.equal(refused.status, 401, refused.text);
      assert.match(String(refused.headers['www-authenticate']), /error="invalid_token"/);
      // And the revoked subject token can no longer be exchanged.
      assertOAuthError(
        await server.http.token(
          { grant_type: TOKEN_EXCHANGE_GRANT, subject_token: token, subject_token_type: ACCESS_TOKEN_TYPE },
          credentials(service),
        ),
        400,
        'invalid_request',
      );
    });

    it('refuses a client not registered for the grant, and an unregistered audience', async () => {
      const { token } = await userToken();
      const params = {
        grant_type: TOKEN_EXCHANGE_GRANT,
        subject_token: token,
        subject_token_type: ACCESS_TOKEN_TYPE,
      };
      assertOAuthError(await server.http.token(params, credentials(app)), 400, 'unauthorized_client');
      assertOAuthError(
        await server.http.token({ ...params, audience: 'https://unknown.example' }, credentials(service)),
        400,
        'invalid_target',
      );
    });

    it('refuses a target the exchanging client is not registered for (decision 23)', async () => {
      const { token } = await userToken();
      const untargeted = await server.client({ grant_types: [TOKEN_EXCHANGE_GRANT], scopes: ['read'] });
      const params = {
        grant_type: TOKEN_EXCHANGE_GRANT,
        subject_token: token,
        subject_token_type: ACCESS_TOKEN_TYPE,
      };
      const refused = await server.http.token({ ...params, audience: NEXT_SERVICE }, credentials(untargeted));
      assertOAuthError(refused, 400, 'invalid_target');
      assert.match(
        (refused.json as { error_description: string }).error_description,
        /not among its token exchange targets/,
      );
      // Its own audience (the subject token's, here the issuer) it may keep.
      const kept = await server.http.token(params, credentials(untargeted));
      assert.equal(kept.status, 200, kept.text);
    });
  });
}
