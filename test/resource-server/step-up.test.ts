import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, before, describe, it } from 'node:test';
import express from 'express';
import Fastify, { type FastifyInstance } from 'fastify';
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload } from 'jose';
import {
  userAuthenticationProblem,
  type AuthenticationRequirements,
  type ResourceServerOptions,
} from 'gatehouse-oauth-resource-server';
import { expressResourceServer } from 'gatehouse-oauth-resource-server/express';
import { gatehouseResourceServer } from 'gatehouse-oauth-resource-server/fastify';
import { startKeyServer, type KeyServer } from '../helpers/key-server.js';
import { listen, plainRequest } from '../helpers/resource-server-requests.js';

// RFC 9470 in the resource-server library: a route demands an acr (one of a list) or a maximum age of
// the sign-in; a token that falls short gets 401 with the insufficient_user_authentication challenge
// (§3), carrying acr_values and max_age, in the Fastify plugin and the Express middleware alike.

const ISSUER = 'https://gatehouse.test';
const NOW = 1_800_000_000;
const MFA = 'urn:gatehouse:acr:multi-factor';
const PHR = 'phr';
const STRONG: AuthenticationRequirements = { acr: [MFA, PHR] };
const RECENT: AuthenticationRequirements = { maxAge: 300 };

describe('the step-up rule (userAuthenticationProblem)', () => {
  const rows: {
    name: string;
    claims: Record<string, unknown>;
    requirements: AuthenticationRequirements;
    expected: string | undefined;
  }[] = [
    { name: 'nothing demanded', claims: {}, requirements: {}, expected: undefined },
    { name: 'an acr of the list', claims: { acr: PHR }, requirements: STRONG, expected: undefined },
    {
      name: 'an acr not in the list',
      claims: { acr: 'urn:gatehouse:acr:single-factor' },
      requirements: STRONG,
      expected: 'the sign-in behind the access token is not strong enough (acr)',
    },
    {
      name: 'no acr at all',
      claims: {},
      requirements: STRONG,
      expected: 'the access token does not say how the user signed in (acr)',
    },
    {
      name: 'a sign-in within max_age',
      claims: { auth_time: NOW - 300 },
      requirements: RECENT,
      expected: undefined,
    },
    {
      name: 'a sign-in older than max_age',
      claims: { auth_time: NOW - 301 },
      requirements: RECENT,
      expected: 'the sign-in behind the access token is too old (auth_time)',
    },
    {
      name: 'no auth_time at all',
      claims: { acr: PHR },
      requirements: RECENT,
      expected: 'the access token does not say when the user signed in (auth_time)',
    },
    {
      name: 'an auth_time that is no number',
      claims: { auth_time: String(NOW) },
      requirements: RECENT,
      expected: 'the access token does not say when the user signed in (auth_time)',
    },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const problem = userAuthenticationProblem(row.claims, row.requirements, NOW);
      assert.equal(problem?.description, row.expected);
      if (problem !== undefined) {
        assert.equal(problem.status, 401);
        assert.equal(problem.code, 'insufficient_user_authentication');
      }
    });
  }
});

describe('resource-server library: per-route acr and max_age, RFC 9470 challenge', () => {
  let keys: KeyServer;
  let sign: (claims: JWTPayload) => Promise<string>;
  const closers: Array<() => unknown> = [];
  let options: ResourceServerOptions;

  before(async () => {
    keys = await startKeyServer();
    const { publicKey, privateKey } = await generateKeyPair('ES256');
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
    keys.answers.set('/jwks', { json: { keys: [jwk] } });
    sign = (claims) =>
      new SignJWT({ client_id: 'app', scope: 'notes:read', jti: `j-${Math.random()}`, ...claims })
        .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: 'k1' })
        .setIssuer(ISSUER)
        .setAudience(ISSUER)
        .setSubject('alice')
        .setIssuedAt(NOW - 10)
        .setExpirationTime(NOW + 600)
        .sign(privateKey);
    options = {
      issuer: ISSUER,
      jwksUri: keys.url('/jwks'),
      ca: keys.ca,
      realm: 'notes',
      now: () => NOW,
    };
  });
  after(async () => {
    for (const close of closers) await close();
    await keys?.close();
  });

  async function fastifyService(): Promise<string> {
    const app: FastifyInstance = Fastify();
    await app.register(gatehouseResourceServer, options);
    app.get('/strong', { preHandler: app.requireToken(['notes:read'], STRONG) }, async (request) => ({
      acr: request.accessToken?.claims.acr,
    }));
    app.get('/recent', { preHandler: app.requireToken(['notes:read'], RECENT) }, async () => ({ ok: true }));
    closers.push(() => app.close());
    return app.listen({ port: 0, host: '127.0.0.1' });
  }

  async function expressService(): Promise<string> {
    const tokens = expressResourceServer(options);
    const app = express();
    app.get('/strong', tokens.requireToken(['notes:read'], STRONG), (_req, res) => {
      res.json({ acr: (res.locals.accessToken as { claims: JWTPayload }).claims.acr });
    });
    app.get('/recent', tokens.requireToken(['notes:read'], RECENT), (_req, res) => res.json({ ok: true }));
    const server = createServer(app);
    const url = await listen(server);
    closers.push(() => {
      tokens.close();
      server.close();
    });
    return url;
  }

  for (const [name, start] of [
    ['Fastify plugin', fastifyService],
    ['Express middleware', expressService],
  ] as const) {
    it(`${name}: admits a strong enough and recent enough sign-in`, async () => {
      const url = await start();
      const token = await sign({ acr: PHR, auth_time: NOW - 60 });
      const strong = await plainRequest(url, '/strong', { headers: { authorization: `Bearer ${token}` } });
      assert.equal(strong.status, 200, strong.text);
      assert.deepEqual(strong.json, { acr: PHR });
      const recent = await plainRequest(url, '/recent', { headers: { authorization: `Bearer ${token}` } });
      assert.equal(recent.status, 200, recent.text);
    });

    it(`${name}: 401 insufficient_user_authentication with acr_values, or max_age`, async () => {
      const url = await start();
      const weak = await sign({ acr: 'urn:gatehouse:acr:single-factor', auth_time: NOW - 600 });
      const strong = await plainRequest(url, '/strong', { headers: { authorization: `Bearer ${weak}` } });
      assert.equal(strong.status, 401);
      assert.equal(
        strong.headers['www-authenticate'],
        'Bearer realm="notes", error="insufficient_user_authentication", ' +
          'error_description="the sign-in behind the access token is not strong enough (acr)", ' +
          `acr_values="${MFA} ${PHR}"`,
      );
      assert.deepEqual(strong.json, {
        error: 'insufficient_user_authentication',
        error_description: 'the sign-in behind the access token is not strong enough (acr)',
      });
      const recent = await plainRequest(url, '/recent', { headers: { authorization: `Bearer ${weak}` } });
      assert.equal(recent.status, 401);
      assert.equal(
        recent.headers['www-authenticate'],
        'Bearer realm="notes", error="insufficient_user_authentication", ' +
          'error_description="the sign-in behind the access token is too old (auth_time)", max_age=300',
      );
    });

    it(`${name}: scope is still checked first (403 insufficient_scope)`, async () => {
      const url = await start();
      const token = await sign({ scope: 'other', acr: 'x' });
      const res = await plainRequest(url, '/strong', { headers: { authorization: `Bearer ${token}` } });
      assert.equal(res.status, 403);
      assert.match(String(res.headers['www-authenticate']), /error="insufficient_scope"/);
    });
  }
});
