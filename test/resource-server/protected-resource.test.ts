import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, before, describe, it } from 'node:test';
import express from 'express';
import Fastify from 'fastify';
import { decodeJwt } from 'jose';
import {
  formatChallenge,
  ProtectedResource,
  ResourceServer,
  TokenError,
  type ResourceServerOptions,
} from 'gatehouse-oauth-resource-server';
import { expressResourceServer } from 'gatehouse-oauth-resource-server/express';
import { gatehouseResourceServer } from 'gatehouse-oauth-resource-server/fastify';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { clientCredentialsToken, expectStatus } from '../helpers/api-requests.js';
import { listen, optionsFor, plainRequest, type PlainResponse } from '../helpers/resource-server-requests.js';

// RFC 9728 in the resource-server library: the metadata document and its well-known paths (§3, §3.1),
// resource_metadata in every Bearer challenge (§5.1), and the audience a resource identifier implies
// (RFC 8707 §2, RFC 9068 §4).

const WELL_KNOWN = '/.well-known/oauth-protected-resource';

describe('ProtectedResource: where the metadata lives (RFC 9728 §3.1)', () => {
  const cases: Array<{ resource: string; url: string; paths: string[]; canonical?: string }> = [
    {
      resource: 'https://MCP.Example.com:443/mcp',
      url: `https://mcp.example.com${WELL_KNOWN}/mcp`,
      paths: [`${WELL_KNOWN}/mcp`, WELL_KNOWN],
      canonical: 'https://mcp.example.com/mcp',
    },
    {
      resource: 'https://mcp.example.com/mcp',
      url: `https://mcp.example.com${WELL_KNOWN}/mcp`,
      paths: [`${WELL_KNOWN}/mcp`, WELL_KNOWN],
    },
    { resource: 'https://mcp.example.com', url: `https://mcp.example.com${WELL_KNOWN}`, paths: [WELL_KNOWN] },
    {
      resource: 'https://mcp.example.com/',
      url: `https://mcp.example.com${WELL_KNOWN}`,
      paths: [WELL_KNOWN],
      canonical: 'https://mcp.example.com',
    },
    {
      resource: 'https://api.example.com:8443/v1/tools/',
      url: `https://api.example.com:8443${WELL_KNOWN}/v1/tools/`,
      paths: [`${WELL_KNOWN}/v1/tools/`, WELL_KNOWN],
    },
    {
      resource: 'http://127.0.0.1:3001/mcp',
      url: `http://127.0.0.1:3001${WELL_KNOWN}/mcp`,
      paths: [`${WELL_KNOWN}/mcp`, WELL_KNOWN],
    },
    { resource: 'http://localhost:3001', url: `http://localhost:3001${WELL_KNOWN}`, paths: [WELL_KNOWN] },
    {
      resource: 'http://[::1]:3001/a',
      url: `http://[::1]:3001${WELL_KNOWN}/a`,
      paths: [`${WELL_KNOWN}/a`, WELL_KNOWN],
    },
  ];
  for (const { resource, url, paths, canonical } of cases) {
    it(resource, () => {
      const metadata = new ProtectedResource({
        resource,
        authorizationServers: ['https://auth.example.com'],
        bearerMethodsSupported: ['header'],
      });
      assert.equal(metadata.metadataUrl, url);
      assert.deepEqual(metadata.metadataPaths, paths);
      // Gatehouse's canonical form (what its tokens' aud says), the same in the document (§3.3).
      assert.equal(metadata.resource, canonical ?? resource);
      assert.equal(metadata.metadata().resource, canonical ?? resource);
    });
  }

  const refused: Array<{ resource: string; error: RegExp }> = [
    { resource: 'mcp', error: /absolute URL/ },
    { resource: 'http://mcp.example.com/mcp', error: /https URL \(http only on a loopback host\)/ },
    { resource: 'ftp://mcp.example.com/', error: /https URL/ },
    { resource: 'https://mcp.example.com/mcp#tools', error: /fragment/ },
    { resource: 'https://mcp.example.com/mcp?tenant=1', error: /query/ },
    { resource: 'https://user:pw@mcp.example.com/', error: /credentials/ },
    { resource: 'https://mcp.example.com/a b', error: /spaces/ },
    { resource: 'https://mcp.example.com\\mcp', error: /backslash/ },
  ];
  for (const { resource, error } of refused) {
    it(`refuses ${resource}`, () => {
      assert.throws(
        () =>
          new ProtectedResource({
            resource,
            authorizationServers: ['https://auth.example.com'],
            bearerMethodsSupported: ['header'],
          }),
        error,
      );
    });
  }
});

describe('ResourceServer options: the RFC 9728 document and the audience it implies', () => {
  const issuer = 'https://auth.example.com/';
  const resource = 'https://mcp.example.com/mcp';
  const cases: Array<{
    name: string;
    options: Partial<ResourceServerOptions>;
    document?: Record<string, unknown>;
    error?: RegExp;
  }> = [
    {
      name: 'defaults: the trusted issuer, header and body',
      options: { resource },
      document: {
        resource,
        authorization_servers: ['https://auth.example.com'],
        bearer_methods_supported: ['header', 'body'],
      },
    },
    {
      name: 'query listed only when allowQueryToken is on',
      options: { resource, allowQueryToken: true },
      document: {
        resource,
        authorization_servers: ['https://auth.example.com'],
        bearer_methods_supported: ['header', 'body', 'query'],
      },
    },
    {
      name: 'every member given',
      options: {
        resource,
        authorizationServers: ['https://auth.example.com', 'https://auth2.example.com'],
        scopesSupported: ['mcp:tools'],
        bearerMethodsSupported: ['header'],
        resourceName: 'Example MCP',
        resourceDocumentation: 'https://mcp.example.com/docs',
        resourcePolicyUri: 'https://mcp.example.com/policy',
        resourceTosUri: 'https://mcp.example.com/tos',
      },
      document: {
        resource,
        authorization_servers: ['https://auth.example.com', 'https://auth2.example.com'],
        scopes_supported: ['mcp:tools'],
        bearer_methods_supported: ['header'],
        resource_name: 'Example MCP',
        resource_documentation: 'https://mcp.example.com/docs',
        resource_policy_uri: 'https://mcp.example.com/policy',
        resource_tos_uri: 'https://mcp.example.com/tos',
      },
    },
    {
      name: 'an audience repeating the resource is allowed',
      options: { resource, audience: [resource] },
      document: {
        resource,
        authorization_servers: ['https://auth.example.com'],
        bearer_methods_supported: ['header', 'body'],
      },
    },
    { name: 'an audience beside the resource', options: { resource, audience: issuer }, error: /audience/ },
    {
      name: 'an audience list wider than the resource',
      options: { resource, audience: [resource, 'https://auth.example.com'] },
      error: /audience/,
    },
    { name: 'metadata without a resource', options: { scopesSupported: ['a'] }, error: /set resource too/ },
    {
      name: 'an unknown bearer method',
      options: { resource, bearerMethodsSupported: ['cookie' as 'header'] },
      error: /bearerMethodsSupported/,
    },
    {
      name: 'no authorization server',
      options: { resource, authorizationServers: [] },
      error: /at least one/,
    },
    {
      name: 'a documentation address that is not a URL',
      options: { resource, resourceDocumentation: 'docs' },
      error: /resourceDocumentation/,
    },
  ];
  for (const { name, options, document, error } of cases) {
    it(name, () => {
      const build = () =>
        new ResourceServer({ issuer, fetch: () => Promise.reject(new Error('no')), ...options });
      if (error !== undefined) {
        assert.throws(build, error);
        return;
      }
      const server = build();
      assert.deepEqual(server.protectedResource?.metadata(), document);
    });
  }

  it('no resource, no metadata', () => {
    assert.equal(new ResourceServer({ issuer }).protectedResource, undefined);
  });
});

describe('formatChallenge: resource_metadata in Bearer challenges (RFC 9728 §5.1)', () => {
  const url = 'https://mcp.example.com/.well-known/oauth-protected-resource/mcp';
  const cases: Array<{ name: string; challenge: string; expected: string }> = [
    {
      name: 'no credential',
      challenge: formatChallenge('bearer', 'mcp', undefined, url),
      expected: `Bearer realm="mcp", resource_metadata="${url}"`,
    },
    {
      name: 'invalid_token',
      challenge: new TokenError('invalid_token', 'bad').challenge('mcp', url),
      expected: `Bearer realm="mcp", resource_metadata="${url}", error="invalid_token", error_description="bad"`,
    },
    {
      name: 'insufficient_scope',
      challenge: new TokenError('insufficient_scope', 'more', { scope: 'a b' }).challenge('mcp', url),
      expected: `Bearer realm="mcp", resource_metadata="${url}", error="insufficient_scope", error_description="more", scope="a b"`,
    },
    {
      name: 'without the option, as before',
      challenge: new TokenError('invalid_token', 'bad').challenge('mcp'),
      expected: 'Bearer realm="mcp", error="invalid_token", error_description="bad"',
    },
    {
      name: 'MAC challenges stay as decision 3 has them',
      challenge: new TokenError('invalid_token', 'bad', { scheme: 'mac' }).challenge('mcp', url),
      expected: 'MAC error="invalid_token", error_description="bad"',
    },
  ];
  for (const { name, challenge, expected } of cases) {
    it(name, () => assert.equal(challenge, expected));
  }
});

const RESOURCE = 'https://notes.example/notes';
const METADATA_URL = `https://notes.example${WELL_KNOWN}/notes`;
const OTHER = 'https://other.example/api';

interface Service {
  url: string;
  close(): Promise<void>;
}

async function fastifyService(options: ResourceServerOptions): Promise<Service> {
  const app = Fastify();
  await app.register(gatehouseResourceServer, options);
  app.get('/notes', { preHandler: app.requireToken(['notes:read']) }, async (request) => ({
    subject: request.accessToken?.subject,
    aud: request.accessToken?.claims.aud,
  }));
  app.post('/notes', { preHandler: app.requireToken(['notes:write']) }, async () => ({ ok: true }));
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return { url, close: () => app.close() };
}

async function expressService(options: ResourceServerOptions): Promise<Service> {
  const tokens = expressResourceServer(options);
  const app = express();
  app.use(tokens.protectedResourceMetadata());
  app.get('/notes', tokens.requireToken(['notes:read']), (_req, res) => {
    const token = res.locals.accessToken as { subject: string; claims: { aud: unknown } };
    res.json({ subject: token.subject, aud: token.claims.aud });
  });
  app.post('/notes', tokens.requireToken(['notes:write']), (_req, res) => res.json({ ok: true }));
  const server = createServer(app);
  const url = await listen(server);
  return {
    url,
    async close() {
      tokens.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const adapters = { Fastify: fastifyService, Express: expressService };

function assertChallenge(res: PlainResponse, status: number, expected: RegExp): void {
  assert.equal(res.status, status, res.text);
  assert.match(String(res.headers['www-authenticate']), expected);
}

for (const backend of backends()) {
  describe(`RFC 9728 in both adapters, against a running Gatehouse (${backend})`, () => {
    let gatehouse: TestServer;
    const services: Service[] = [];
    before(async () => {
      gatehouse = await startTestServer(backend, {}, { transport: 'https' });
      // RFC 8707: the resources tokens may be asked for, offering every scope.
      for (const uri of [RESOURCE, OTHER, `${RESOURCE}/`])
        await gatehouse.gatehouse.engine.resources.create({ uri });
    });
    after(async () => {
      for (const service of services) await service.close();
      await gatehouse.close();
    });

    /** A token Gatehouse issues for `resource` (RFC 8707 §2): `aud` a string for one, an array for several. */
    async function addressedTo(resource: string | string[], scopes = ['notes:read']): Promise<string> {
      const { credentials } = await clientCredentialsToken(gatehouse, scopes);
      const res = await gatehouse.http.token({ grant_type: 'client_credentials', resource }, credentials);
      expectStatus(res, 200);
      const token = (res.json as { access_token: string }).access_token;
      assert.deepEqual(decodeJwt(token).aud, resource);
      return token;
    }

    for (const [name, start] of Object.entries(adapters)) {
      describe(name, () => {
        let url: string;
        before(async () => {
          const service = await start(
            optionsFor(gatehouse, {
              realm: 'notes',
              resource: RESOURCE,
              scopesSupported: ['notes:read', 'notes:write'],
              bearerMethodsSupported: ['header'],
              resourceName: 'Notes',
            }),
          );
          services.push(service);
          url = service.url;
        });

        it('serves the metadata at the path-inserted and the bare well-known path', async () => {
          for (const path of [`${WELL_KNOWN}/notes`, WELL_KNOWN]) {
            const res = await plainRequest(url, path);
            assert.equal(res.status, 200, `${path}: ${res.text}`);
            assert.match(String(res.headers['content-type']), /^application\/json/);
            assert.equal(res.headers['access-control-allow-origin'], '*');
            assert.deepEqual(res.json, {
              resource: RESOURCE,
              authorization_servers: ['https://gatehouse.test'],
              scopes_supported: ['notes:read', 'notes:write'],
              bearer_methods_supported: ['header'],
              resource_name: 'Notes',
            });
            const head = await plainRequest(url, path, { method: 'HEAD' });
            assert.equal(head.status, 200);
            assert.equal(head.text, '');
          }
          assert.equal((await plainRequest(url, `${WELL_KNOWN}/other`)).status, 404);
        });

        it('names the metadata in every Bearer challenge: 401 without a token, 401 invalid, 403', async () => {
          const res = await plainRequest(url, '/notes');
          assert.equal(res.status, 401);
          assert.equal(
            res.headers['www-authenticate'],
            `Bearer realm="notes", resource_metadata="${METADATA_URL}"`,
          );
          assertChallenge(
            await plainRequest(url, '/notes', { headers: { authorization: 'Bearer garbage' } }),
            401,
            new RegExp(`^Bearer realm="notes", resource_metadata="${METADATA_URL}", error="invalid_token"`),
          );
          const readOnly = await addressedTo(RESOURCE);
          assertChallenge(
            await plainRequest(url, '/notes', {
              method: 'POST',
              headers: { authorization: `Bearer ${readOnly}` },
            }),
            403,
            new RegExp(
              `^Bearer realm="notes", resource_metadata="${METADATA_URL}", error="insufficient_scope", .*scope="notes:write"$`,
            ),
          );
        });

        it('admits a token whose aud is or contains the resource', async () => {
          for (const aud of [RESOURCE, [OTHER, RESOURCE]]) {
            const token = await addressedTo(aud);
            const res = await plainRequest(url, '/notes', { headers: { authorization: `Bearer ${token}` } });
            assert.equal(res.status, 200, res.text);
            assert.deepEqual((res.json as { aud: unknown }).aud, aud);
          }
        });

        it('refuses a token for the issuer (no resource asked) or for another resource: 401 invalid_token', async () => {
          const { token } = await clientCredentialsToken(gatehouse, ['notes:read']);
          const others = [
            token.access_token, // aud: the issuer, as Gatehouse issues without `resource`
            await addressedTo(OTHER),
            await addressedTo([OTHER, 'https://gatehouse.test']), // another resource and Gatehouse's own API
            await addressedTo(`${RESOURCE}/`), // exact match: another URL is another resource
          ];
          for (const other of others) {
            const res = await plainRequest(url, '/notes', { headers: { authorization: `Bearer ${other}` } });
            assertChallenge(
              res,
              401,
              /error="invalid_token", error_description="the access token was not issued for this resource \(aud\)"$/,
            );
            assert.equal((res.json as { error: string }).error, 'invalid_token');
          }
        });
      });
    }

    it('Express: the metadata middleware needs the resource option, and passes other requests on', async () => {
      assert.throws(
        () => expressResourceServer(optionsFor(gatehouse)).protectedResourceMetadata(),
        /resource/,
      );
      const tokens = expressResourceServer(optionsFor(gatehouse, { resource: RESOURCE }));
      const app = express();
      app.use(tokens.protectedResourceMetadata());
      app.post(WELL_KNOWN, (_req, res) => res.status(405).json({ passed: true }));
      const server = createServer(app);
      const url = await listen(server);
      services.push({
        url,
        async close() {
          tokens.close();
          await new Promise((resolve) => server.close(resolve));
        },
      });
      const post = await plainRequest(url, WELL_KNOWN, { method: 'POST' });
      assert.equal(post.status, 405);
      assert.deepEqual(post.json, { passed: true });
    });
  });
}
