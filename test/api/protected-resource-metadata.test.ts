import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  auth,
  discoverAuthorizationServerMetadata,
  discoverOAuthProtectedResourceMetadata,
  extractResourceMetadataUrl,
  extractWWWAuthenticateParams,
} from '@modelcontextprotocol/sdk/client/auth.js';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { decodeJwt } from 'jose';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { freePort } from '../helpers/spawned-server.js';
import { trustingFetch } from '../helpers/trusting-fetch.js';
import {
  apiClient,
  assertProblem,
  bearer,
  clientCredentialsToken,
  expectStatus,
  tokenFor,
} from '../helpers/api-requests.js';
import { DPOP_SIGNING_ALGORITHMS } from '../../src/core/tokens/dpop.js';

const ISSUER = 'https://gatehouse.test';
const WELL_KNOWN = '/.well-known/oauth-protected-resource';

/** The RFC 9728 §2 document /v1 publishes for an issuer (decision 47). */
function expectedDocument(issuer: string) {
  return {
    resource: `${issuer}/v1`,
    authorization_servers: [issuer],
    scopes_supported: ['admin'],
    bearer_methods_supported: ['header'],
    resource_name: 'Gatehouse management API',
    resource_documentation: `${issuer}/v1/openapi`,
    dpop_signing_alg_values_supported: [...DPOP_SIGNING_ALGORITHMS],
  };
}

/** The parameters of each challenge of a WWW-Authenticate value, by scheme. */
function challenges(header: string | string[] | undefined): Map<string, Record<string, string>> {
  const value = [header ?? []].flat().join(', ');
  const found = new Map<string, Record<string, string>>();
  let current: Record<string, string> | undefined;
  for (const match of value.matchAll(/(?:^|,\s*)(?:([A-Za-z]+) )?([a-z_]+)=(?:"([^"]*)"|([^,\s]*))/g)) {
    const [, scheme, name, quoted, bare] = match;
    if (scheme !== undefined) {
      current = {};
      found.set(scheme, current);
    }
    if (current !== undefined && name !== undefined) current[name] = quoted ?? bare ?? '';
  }
  return found;
}

for (const backend of backends()) {
  describe(`/v1's protected resource metadata, RFC 9728 (${backend})`, () => {
    describe('at the issuer', () => {
      let server: TestServer;
      before(async () => {
        server = await startTestServer(backend);
      });
      after(async () => {
        await server.close();
      });

      it('serves the document at /.well-known/oauth-protected-resource/v1 (§3.1), cacheable like the server metadata', async () => {
        const res = await server.http.request(`${WELL_KNOWN}/v1`);
        expectStatus(res, 200);
        assert.match(String(res.headers['content-type']), /^application\/json/);
        assert.equal(res.headers['cache-control'], 'public, max-age=60');
        assert.deepEqual(res.json, expectedDocument(ISSUER));
        // The document's dpop algorithms are the server metadata's.
        const metadata = await server.http.request('/.well-known/oauth-authorization-server');
        assert.deepEqual(
          (res.json as Record<string, unknown>).dpop_signing_alg_values_supported,
          (metadata.json as Record<string, unknown>).dpop_signing_alg_values_supported,
        );
        // The OpenAPI document (resource_documentation) tells of it too.
        const openapi = await server.http.request('/v1/openapi', { headers: { accept: 'application/json' } });
        expectStatus(openapi, 200);
        const description = String((openapi.json as { info: { description: string } }).info.description);
        assert.ok(description.includes(`${ISSUER}${WELL_KNOWN}/v1`), description);
        // Only /v1 is described: the bare well-known path names the origin, which is no resource here.
        expectStatus(await server.http.request(WELL_KNOWN), 404);
        expectStatus(await server.http.request(`${WELL_KNOWN}/v1/clients`), 404);
      });

      it('names it in every Bearer and DPoP challenge of /v1: no token, a bad token, too little scope (§5.1)', async () => {
        const url = `${ISSUER}${WELL_KNOWN}/v1`;
        const none = await server.http.request('/v1/clients');
        assertProblem(none, 401);
        const noneChallenges = challenges(none.headers['www-authenticate']);
        assert.deepEqual(noneChallenges.get('Bearer'), { realm: 'gatehouse', resource_metadata: url });
        assert.equal(noneChallenges.get('DPoP')?.resource_metadata, url);

        const bad = await server.http.request('/v1/clients', { headers: bearer('not-a-token') });
        assertProblem(bad, 401);
        const badChallenge = challenges(bad.headers['www-authenticate']).get('Bearer');
        assert.equal(badChallenge?.error, 'invalid_token');
        assert.equal(badChallenge?.resource_metadata, url);

        const { token } = await clientCredentialsToken(server, ['profile']);
        const weak = await server.http.request('/v1/clients', { headers: bearer(token) });
        assertProblem(weak, 403);
        const weakChallenge = challenges(weak.headers['www-authenticate']).get('Bearer');
        assert.equal(weakChallenge?.error, 'insufficient_scope');
        assert.equal(weakChallenge?.scope, 'admin');
        assert.equal(weakChallenge?.resource_metadata, url);
      });

      it('takes resource=<issuer>/v1 as the issuer: the token is the issuer’s, and /v1 accepts it', async () => {
        const { client, secret } = await server.client({
          grant_types: ['client_credentials'],
          scopes: ['admin'],
        });
        const credentials = { id: client.id, secret };
        for (const resource of [`${ISSUER}/v1`, 'HTTPS://Gatehouse.test:443/v1']) {
          const token = await tokenFor(server, { grant_type: 'client_credentials', resource }, credentials);
          // Exactly what naming the issuer (or nothing) gets: /v1's audience is unchanged.
          assert.equal(decodeJwt(token.access_token).aud, ISSUER);
          expectStatus(await apiClient(server, token).get('/clients'), 200);
        }
        // Another path under the issuer is no resource.
        const other = await server.http.token(
          { grant_type: 'client_credentials', resource: `${ISSUER}/v2` },
          credentials,
        );
        assert.equal(other.status, 400);
        assert.equal((other.json as { error: string }).error, 'invalid_target');
        // /v1 cannot be registered as a resource of its own, whose tokens /v1 would refuse.
        const admin = apiClient(server, (await clientCredentialsToken(server, ['admin'])).token);
        assertProblem(await admin.post('/resources', { uri: `${ISSUER}/v1` }), 409, 'uri');
      });
    });

    describe('under a base path', () => {
      let server: TestServer;
      const issuer = 'https://example.test/gh';
      before(async () => {
        server = await startTestServer(backend, { issuer, basePath: '/gh' });
      });
      after(async () => {
        await server.close();
      });

      it("serves it at the origin's root, the base path after the well-known segment, and names that URL", async () => {
        const app = server.gatehouse.app;
        const res = await app.inject({ method: 'GET', url: `${WELL_KNOWN}/gh/v1` });
        assert.equal(res.statusCode, 200);
        assert.deepEqual(res.json(), expectedDocument(issuer));
        // Not under the base path: a well-known URI lives at the root (RFC 8615 §3).
        assert.equal((await app.inject({ method: 'GET', url: `/gh${WELL_KNOWN}/v1` })).statusCode, 404);

        const refused = await app.inject({ method: 'GET', url: '/gh/v1/clients' });
        assert.equal(refused.statusCode, 401);
        assert.equal(
          challenges(refused.headers['www-authenticate']).get('Bearer')?.resource_metadata,
          `https://example.test${WELL_KNOWN}/gh/v1`,
        );
      });
    });

    describe("an MCP client's discovery, with the MCP SDK", () => {
      let server: TestServer;
      let issuer: string;
      let https: ReturnType<typeof trustingFetch>;
      const sent: { url: string; body: string | undefined }[] = [];
      /** The SDK's FetchLike over trustingFetch (the test CA), each request recorded. */
      const fetchFn = async (input: string | URL, init: RequestInit = {}): Promise<Response> => {
        const url = String(input);
        const body = init.body === undefined || init.body === null ? undefined : String(init.body);
        sent.push({ url, body });
        return https.fetch(url, {
          method: init.method,
          headers: Object.fromEntries(new Headers(init.headers).entries()),
          body,
        });
      };
      before(async () => {
        // The SDK fetches what the documents name: the issuer is where the server really listens.
        const port = await freePort();
        issuer = `https://localhost:${port}`;
        server = await startTestServer(backend, { port, issuer }, { transport: 'https' });
        https = trustingFetch(server.ca);
      });
      after(async () => {
        https?.close();
        await server?.close();
      });

      it('goes from /v1 and its 401 to the metadata, the authorization server, a token for /v1, and a call', async () => {
        const api = `${issuer}/v1`;
        const refused = await fetchFn(`${api}/clients`);
        assert.equal(refused.status, 401);
        const metadataUrl = extractResourceMetadataUrl(refused);
        assert.equal(metadataUrl?.href, `${issuer}${WELL_KNOWN}/v1`);
        assert.equal(extractWWWAuthenticateParams(refused).resourceMetadataUrl?.href, metadataUrl?.href);

        const resource = await discoverOAuthProtectedResourceMetadata(
          `${api}/clients`,
          { resourceMetadataUrl: metadataUrl },
          fetchFn,
        );
        assert.equal(resource.resource, api);
        assert.deepEqual(resource.authorization_servers, [issuer]);
        assert.deepEqual(resource.scopes_supported, ['admin']);
        // From /v1's URL alone, the path-inserted well-known URI (§3.1) is the same document.
        const byPath = await discoverOAuthProtectedResourceMetadata(api, {}, fetchFn);
        assert.deepEqual(byPath, resource);

        const authorizationServer = resource.authorization_servers?.[0] ?? '';
        const metadata = await discoverAuthorizationServerMetadata(authorizationServer, { fetchFn });
        assert.equal(metadata?.issuer, issuer);
        assert.equal(metadata?.token_endpoint, `${issuer}/token`);

        // An operator's client with `admin` (created as `gatehouse clients create --scopes admin` does).
        const { client, secret } = await server.client({
          name: 'MCP-style admin',
          grant_types: ['client_credentials'],
          scopes: ['admin'],
        });
        const provider = new ClientCredentialsProvider({
          clientId: client.id,
          clientSecret: secret,
          expectedIssuer: issuer,
          // For client_credentials the SDK sends the provider's scope: the one the metadata lists.
          scope: resource.scopes_supported?.join(' '),
        });
        sent.length = 0;
        const result = await auth(provider, { serverUrl: api, resourceMetadataUrl: metadataUrl, fetchFn });
        assert.equal(result, 'AUTHORIZED');
        const tokenRequest = sent.find((request) => request.url === `${issuer}/token`);
        const form = new URLSearchParams(tokenRequest?.body ?? '');
        assert.equal(form.get('resource'), api, 'the SDK asks for /v1 by its resource identifier');
        assert.equal(form.get('scope'), 'admin');
        const tokens = provider.tokens();
        assert.equal(tokens?.scope, 'admin');

        const called = await fetchFn(`${api}/clients`, {
          headers: { authorization: `Bearer ${tokens?.access_token ?? ''}` },
        });
        assert.equal(called.status, 200);
        const listed = (await called.json()) as { items: { client_id: string }[] };
        assert.ok(listed.items.some((item) => item.client_id === client.id));
      });
    });
  });
}
