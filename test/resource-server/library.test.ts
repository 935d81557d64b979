import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import formBody from '@fastify/formbody';
import express from 'express';
import Fastify, { type FastifyInstance } from 'fastify';
import { SignJWT } from 'jose';
import { ResourceServer, type ResourceServerOptions } from 'gatehouse-oauth-resource-server';
import { expressResourceServer } from 'gatehouse-oauth-resource-server/express';
import { gatehouseResourceServer } from 'gatehouse-oauth-resource-server/fastify';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import {
  apiClient,
  clientCredentialsToken,
  expectStatus,
  revoke,
  userToken,
} from '../helpers/api-requests.js';
import { listen, optionsFor, plainRequest, type PlainResponse } from '../helpers/resource-server-requests.js';

/** A Fastify resource server: /notes needs notes:read, POST /notes notes:write. */
async function fastifyService(
  options: ResourceServerOptions,
): Promise<{ app: FastifyInstance; url: string }> {
  const app = Fastify();
  await app.register(formBody);
  await app.register(gatehouseResourceServer, options);
  app.get('/notes', { preHandler: app.requireToken(['notes:read']) }, async (request) => ({
    subject: request.accessToken?.subject,
    scopes: request.accessToken?.scopes,
    client: request.accessToken?.clientId,
    username: request.accessToken?.username ?? null,
  }));
  app.post('/notes', { preHandler: app.requireToken(['notes:write']) }, async (request) => ({
    subject: request.accessToken?.subject,
  }));
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, url };
}

/** The same service on Express. */
async function expressService(
  options: ResourceServerOptions,
): Promise<{ server: Server; url: string; close(): void }> {
  const tokens = expressResourceServer(options);
  const app = express();
  app.use(express.urlencoded({ extended: false }));
  app.get('/notes', tokens.requireToken(['notes:read']), (req, res) => {
    const token = res.locals.accessToken as { subject: string; scopes: string[] };
    res.json({ subject: token.subject, scopes: token.scopes });
  });
  app.post('/notes', tokens.requireToken(['notes:write']), (_req, res) => {
    res.json({ subject: (res.locals.accessToken as { subject: string }).subject });
  });
  const server = createServer(app);
  const url = await listen(server);
  return {
    server,
    url,
    close() {
      tokens.close();
      server.close();
    },
  };
}

const get = (url: string, headers: Record<string, string> = {}) => plainRequest(url, '/notes', { headers });
const auth = (token: string) => ({ authorization: `Bearer ${token}` });

function assertChallenge(res: PlainResponse, status: number, pattern: RegExp): void {
  assert.equal(res.status, status, res.text);
  assert.match(String(res.headers['www-authenticate']), pattern);
}

for (const backend of backends()) {
  describe(`resource-server library against a running Gatehouse (${backend})`, () => {
    let gatehouse: TestServer;
    let rsCredentials: { clientId: string; clientSecret: string };
    const closers: Array<() => unknown> = [];
    before(async () => {
      gatehouse = await startTestServer(backend, {}, { transport: 'https' });
      const { client, secret } = await gatehouse.client({ name: 'notes service', scopes: ['mac-keys'] });
      rsCredentials = { clientId: client.id, clientSecret: secret };
    });
    after(async () => {
      for (const close of closers) await close();
      await gatehouse.close();
    });

    async function fastifyRs(extra: Partial<ResourceServerOptions> = {}) {
      const service = await fastifyService(optionsFor(gatehouse, extra));
      closers.push(() => service.app.close());
      return service.url;
    }

    it('Fastify plugin: admits a valid token with the scope and attaches its claims', async () => {
      const url = await fastifyRs();
      const { client, token } = await clientCredentialsToken(gatehouse, ['notes:read']);
      const res = await get(url, auth(token.access_token));
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.json, {
        subject: client.id,
        scopes: ['notes:read'],
        client: client.id,
        username: null,
      });
    });

    it('Fastify plugin: answers each RFC 6750 error', async () => {
      const url = await fastifyRs();
      assertChallenge(await get(url), 401, /^Bearer realm="notes"$/);
      assertChallenge(await get(url, auth('garbage')), 401, /^Bearer realm="notes", error="invalid_token"/);
      assertChallenge(await get(url, { authorization: 'Bearer a b' }), 400, /error="invalid_request"/);
      const { token } = await clientCredentialsToken(gatehouse, ['notes:read']);
      const post = await plainRequest(url, '/notes', { method: 'POST', headers: auth(token.access_token) });
      assertChallenge(
        post,
        403,
        /error="insufficient_scope", error_description="[^"]+", scope="notes:write"$/,
      );
      assert.equal((post.json as { error: string }).error, 'insufficient_scope');
      const query = await plainRequest(url, `/notes?access_token=${token.access_token}`);
      assertChallenge(query, 400, /error="invalid_request"/);

      gatehouse.clock.advance(3700); // past exp and the 5 s default tolerance
      try {
        assertChallenge(
          await get(url, auth(token.access_token)),
          401,
          /error_description="the access token has expired"/,
        );
      } finally {
        gatehouse.clock.advance(-3700);
      }
    });

    it('Fastify plugin: takes the token from a form body (RFC 6750 §2.2)', async () => {
      const url = await fastifyRs();
      const { client, token } = await clientCredentialsToken(gatehouse, ['notes:write']);
      const res = await plainRequest(url, '/notes', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ access_token: token.access_token }).toString(),
      });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.json, { subject: client.id });
    });

    it('sees a revocation only when told to introspect, and then names the user', async () => {
      const local = await fastifyRs();
      const exact = await fastifyRs({ introspection: rsCredentials });
      const { credentials, token, user } = await userToken(gatehouse, ['notes:read']);
      const before = await get(exact, auth(token.access_token));
      assert.equal(before.status, 200, before.text);
      assert.equal((before.json as { username: string }).username, user.username);
      expectStatus(await revoke(gatehouse, credentials, { token: token.access_token }), 200);
      assertChallenge(await get(exact, auth(token.access_token)), 401, /error="invalid_token"/);
      // Local validation alone cannot know: the documented trade-off of not calling Gatehouse.
      assert.equal((await get(local, auth(token.access_token))).status, 200);
    });

    it('refetches the JWKS when a token names a key it has not seen (after rotation)', async () => {
      const url = await fastifyRs();
      const first = await clientCredentialsToken(gatehouse, ['notes:read']);
      assert.equal((await get(url, auth(first.token.access_token))).status, 200);
      const admin = await clientCredentialsToken(gatehouse, ['admin']);
      expectStatus(await apiClient(gatehouse, admin.token).post('/signing-keys'), 201);
      const second = await clientCredentialsToken(gatehouse, ['notes:read']);
      assert.equal((await get(url, auth(second.token.access_token))).status, 200);
      assert.equal((await get(url, auth(first.token.access_token))).status, 200, 'retired keys still verify');
    });

    it('refuses tokens outside the algorithm allow-list, or for another audience or issuer', async () => {
      const url = await fastifyRs();
      const { client, token } = await clientCredentialsToken(gatehouse, ['notes:read']);
      const now = gatehouse.clock.now();
      const claims = { client_id: client.id, scope: 'notes:read', jti: 'j1' };
      const hs256 = await new SignJWT(claims)
        .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt' })
        .setIssuer('https://gatehouse.test')
        .setAudience('https://gatehouse.test')
        .setSubject(client.id)
        .setIssuedAt(now)
        .setExpirationTime(now + 600)
        .sign(new TextEncoder().encode('x'.repeat(32)));
      const [, payload] = token.access_token.split('.');
      const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'at+jwt' })).toString('base64url')}.${payload}.`;
      for (const bad of [hs256, none]) {
        assertChallenge(await get(url, auth(bad)), 401, /error="invalid_token"/);
      }
      const otherAudience = await fastifyRs({ audience: 'https://other.example' });
      assertChallenge(await get(otherAudience, auth(token.access_token)), 401, /error="invalid_token"/);
      const otherIssuer = await fastifyRs({ issuer: 'https://elsewhere.example' });
      assertChallenge(await get(otherIssuer, auth(token.access_token)), 401, /error="invalid_token"/);
      assert.throws(() => new ResourceServer({ issuer: 'https://x', algorithms: ['HS256'] }));
    });

    it('answers 503 when introspection cannot be reached, never letting the request through', async () => {
      const url = await fastifyRs({
        introspection: { ...rsCredentials, endpoint: 'https://127.0.0.1:1/introspect' },
      });
      const { token } = await clientCredentialsToken(gatehouse, ['notes:read']);
      const res = await get(url, auth(token.access_token));
      assert.equal(res.status, 503, res.text);
      assert.equal(res.headers['retry-after'], '5');
    });

    it('Express middleware: 200 with claims, 401, 403, form body, and revocation via introspection', async () => {
      const service = await expressService(optionsFor(gatehouse, { introspection: rsCredentials }));
      closers.push(() => service.close());
      const { client, credentials, token } = await clientCredentialsToken(gatehouse, [
        'notes:read',
        'notes:write',
      ]);
      const ok = await get(service.url, auth(token.access_token));
      assert.equal(ok.status, 200, ok.text);
      assert.deepEqual(ok.json, { subject: client.id, scopes: ['notes:read', 'notes:write'] });
      assertChallenge(await get(service.url), 401, /^Bearer realm="notes"$/);
      const readOnly = await clientCredentialsToken(gatehouse, ['notes:read']);
      const post = await plainRequest(service.url, '/notes', {
        method: 'POST',
        headers: auth(readOnly.token.access_token),
      });
      assertChallenge(post, 403, /scope="notes:write"/);
      const form = await plainRequest(service.url, '/notes', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `access_token=${encodeURIComponent(token.access_token)}`,
      });
      assert.equal(form.status, 200, form.text);
      expectStatus(await revoke(gatehouse, credentials, { token: token.access_token }), 200);
      assertChallenge(await get(service.url, auth(token.access_token)), 401, /error="invalid_token"/);
    });
  });
}
