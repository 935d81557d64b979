import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import { ClientRegistry } from '../../src/core/clients/client-registry.js';
import type { Client } from '../../src/core/model.js';
import { signMacRequest } from 'gatehouse-oauth-resource-server/mac';
import { UserRegistry } from '../../src/core/users/user-registry.js';
import { systemClock } from '../../src/shared/clock.js';
import { randomToken, sha256 } from '../../src/shared/crypto.js';
import { createSqlStorage, type SqlStorage } from '../../src/storage/sql/index.js';
import { TEST_DATABASE_URL } from '../helpers/backends.js';
import { tableRows } from '../helpers/store-sql.js';
import { waitFor } from '../helpers/wait.js';
import { basicAuth } from '../helpers/https-client.js';
import { CookieJar, hidden } from '../helpers/cookie-jar.js';
import {
  createDatabase,
  runCli,
  spawnServer,
  type SpawnedServer,
  type SpawnOptions,
} from '../helpers/spawned-server.js';

const ISSUER = 'https://gatehouse.scale.test';
const REDIRECT = 'https://app.test/cb';
const PER_CLIENT = 30;

type Credentials = { id: string; secret: string };

describe(
  'several processes on one PostgreSQL',
  { skip: !TEST_DATABASE_URL && 'set GATEHOUSE_TEST_DATABASE_URL' },
  () => {
    let database: { url: string; drop(): Promise<void> };
    let storage: SqlStorage;
    let a: SpawnedServer;
    let b: SpawnedServer;
    const dirs: string[] = [];
    let client: Client;
    let credentials: Credentials;

    const options = (dataDir: string): SpawnOptions => ({
      dataDir,
      databaseUrl: database.url,
      env: {
        GATEHOUSE_ISSUER: ISSUER,
        // Every request here comes from 127.0.0.1: limit per client only, and check that limit is shared.
        GATEHOUSE_RATE_LIMIT_TOKEN_PER_ADDRESS: '0',
        GATEHOUSE_RATE_LIMIT_TOKEN_PER_CLIENT: String(PER_CLIENT),
      },
    });

    const newClient = async (
      grantTypes: string[],
      extra: { scopes?: string[]; token_type?: string } = {},
    ): Promise<{ client: Client; credentials: Credentials }> => {
      const created = await new ClientRegistry(storage, systemClock).create({
        name: `scale-out ${randomUUID().slice(0, 6)}`,
        redirect_uris: [REDIRECT],
        grant_types: grantTypes,
        scopes: ['read'],
        ...extra,
      });
      return {
        client: created.client,
        credentials: { id: created.client.id, secret: created.secret as string },
      };
    };

    const seedCode = async (forClient: Client, userId: string): Promise<string> => {
      const now = systemClock.now();
      const grantId = randomUUID();
      await storage.grants.insert({
        id: grantId,
        clientId: forClient.id,
        userId,
        scope: ['read'],
        createdAt: now,
        expiresAt: null,
        revokedAt: null,
      });
      const code = randomToken('ac_');
      await storage.codes.insert({
        hash: sha256(code),
        clientId: forClient.id,
        userId,
        grantId,
        redirectUri: REDIRECT,
        scope: ['read'],
        codeChallenge: null,
        codeChallengeMethod: null,
        createdAt: now,
        expiresAt: now + 600,
        consumedAt: null,
        nonce: null,
        authTime: null,
        sid: null,
        resources: [],
        dpopJkt: null,
      });
      return code;
    };

    const redeem = (server: SpawnedServer, code: string, creds = credentials) =>
      server.http.token({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT }, creds);

    before(async () => {
      database = await createDatabase(TEST_DATABASE_URL as string);
      storage = createSqlStorage({ dataDir: tmpdir(), databaseUrl: database.url });
      for (let i = 0; i < 2; i++) dirs.push(mkdtempSync(join(tmpdir(), `gatehouse-scale-${i}-`)));
      // Both start at once: migrations and the first signing key must sort themselves out in the store.
      [a, b] = await Promise.all([
        spawnServer(options(dirs[0] as string)),
        spawnServer(options(dirs[1] as string)),
      ]);
      ({ client, credentials } = await newClient([
        'authorization_code',
        'refresh_token',
        'client_credentials',
      ]));
    });

    after(async () => {
      await Promise.all([a?.stop(), b?.stop()]);
      await storage?.close();
      await database?.drop();
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    });

    it('a code issued through A (browser session shared) is redeemed at B', async () => {
      const user = await new UserRegistry(storage, systemClock).create({
        username: 'scale-user',
        password: 'a long enough password',
      });
      assert.ok(user.id);
      const jar = new CookieJar();
      const query = new URLSearchParams({
        response_type: 'code',
        client_id: client.id,
        redirect_uri: REDIRECT,
        scope: 'read',
        state: 'xyz',
      }).toString();
      // Sign in at A...
      const signInPage = await jar.get(a.http, `/authorize?${query}`);
      assert.equal(signInPage.status, 200);
      const signedIn = await jar.post(a.http, '/sign-in', {
        csrf_token: hidden(signInPage, 'csrf_token'),
        next: hidden(signInPage, 'next'),
        username: 'scale-user',
        password: 'a long enough password',
      });
      assert.equal(signedIn.status, 303);
      // ...the session is in the store, so B shows the consent page for the same browser...
      const consent = await jar.get(b.http, `/authorize?${query}`);
      assert.equal(consent.status, 200, consent.text.slice(0, 200));
      assert.match(consent.text, /Allow/);
      // ...and A takes the decision.
      const decided = await jar.post(a.http, '/consent', {
        csrf_token: hidden(consent, 'csrf_token'),
        request: hidden(consent, 'request'),
        scope: 'read',
        lifetime: 'forever',
        decision: 'allow',
      });
      assert.equal(decided.status, 302, decided.text.slice(0, 200));
      const location = new URL(String(decided.headers.location));
      assert.equal(location.searchParams.get('state'), 'xyz');
      const code = location.searchParams.get('code') as string;
      const res = await redeem(b, code);
      assert.equal(res.status, 200, res.text);
      assert.equal((await redeem(a, code)).status, 400, 'and not again at A');
    });

    // Each test has a client of its own: the per-client rate limit is in force (and shared) here.
    const freshClient = async () => {
      ({ client, credentials } = await newClient([
        'authorization_code',
        'refresh_token',
        'client_credentials',
      ]));
    };

    it('20 concurrent redemptions of one code, split over A and B, give exactly one 200', async () => {
      await freshClient();
      const user = await new UserRegistry(storage, systemClock).create({
        username: `u-${randomUUID()}`,
        password: 'a long enough password',
      });
      const code = await seedCode(client, user.id);
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => redeem(i % 2 ? a : b, code)));
      const statuses = results.map((r) => r.status);
      assert.equal(statuses.filter((s) => s === 200).length, 1, `statuses: ${statuses.join(',')}`);
      assert.equal(statuses.filter((s) => s === 400).length, 19);
    });

    it('20 concurrent refreshes with one refresh token, split over A and B, give exactly one 200', async () => {
      await freshClient();
      const user = await new UserRegistry(storage, systemClock).create({
        username: `u-${randomUUID()}`,
        password: 'a long enough password',
      });
      const first = await redeem(a, await seedCode(client, user.id));
      const refreshToken = (first.json as { refresh_token: string }).refresh_token;
      assert.ok(refreshToken);
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          (i % 2 ? a : b).http.token(
            { grant_type: 'refresh_token', refresh_token: refreshToken },
            credentials,
          ),
        ),
      );
      const statuses = results.map((r) => r.status);
      assert.equal(statuses.filter((s) => s === 200).length, 1, `statuses: ${statuses.join(',')}`);
      assert.equal(statuses.filter((s) => s === 400).length, 19);
    });

    it('a grant revoked through A is refused at B at once', async () => {
      await freshClient();
      const user = await new UserRegistry(storage, systemClock).create({
        username: `u-${randomUUID()}`,
        password: 'a long enough password',
      });
      const issued = (await redeem(b, await seedCode(client, user.id))).json as {
        access_token: string;
        refresh_token: string;
      };
      const auth = { authorization: basicAuth(credentials.id, credentials.secret) };
      const active = await b.http.request('/introspect', {
        form: { token: issued.access_token },
        headers: auth,
      });
      assert.equal((active.json as { active: boolean }).active, true);
      const revoked = await a.http.request('/revoke', {
        form: { token: issued.refresh_token },
        headers: auth,
      });
      assert.equal(revoked.status, 200);
      // No cache between B and the store: the very next request sees it.
      const refresh = await b.http.token(
        { grant_type: 'refresh_token', refresh_token: issued.refresh_token },
        credentials,
      );
      assert.equal(refresh.status, 400);
      assert.equal((refresh.json as { error: string }).error, 'invalid_grant');
      const after = await b.http.request('/introspect', {
        form: { token: issued.access_token },
        headers: auth,
      });
      assert.equal((after.json as { active: boolean }).active, false);
    });

    it('a key rotated with `gatehouse keys rotate` is served by B’s JWKS and used by A', async () => {
      await freshClient();
      const rotated = await runCli(['keys', 'rotate', '--json'], options(dirs[0] as string));
      assert.equal(rotated.code, 0, rotated.stderr);
      const { kid } = JSON.parse(rotated.stdout) as { kid: string };
      // Each process re-reads the keys every few seconds (keyRefreshIntervalSeconds).
      let jwks: JSONWebKeySet | undefined;
      for (let i = 0; i < 150; i++) {
        const set = (await b.http.request('/jwks')).json as JSONWebKeySet;
        if (set.keys.some((key) => key.kid === kid)) {
          jwks = set;
          break;
        }
        await sleep(100);
      }
      assert.ok(jwks, 'B serves the new key');
      let token: string | undefined;
      for (let i = 0; i < 40 && token === undefined; i++) {
        // A fresh client now and then: this polling must not run into the per-client rate limit.
        if (i % 20 === 19) await freshClient();
        const res = await a.http.token({ grant_type: 'client_credentials' }, credentials);
        assert.equal(res.status, 200, res.text);
        const candidate = (res.json as { access_token: string }).access_token;
        if (decodeProtectedHeader(candidate).kid === kid) token = candidate;
        else await sleep(500);
      }
      assert.ok(token, 'A signs with the new key');
      const { payload } = await jwtVerify(token, createLocalJWKSet(jwks), { issuer: ISSUER, typ: 'at+jwt' });
      assert.equal(payload.client_id, client.id);
    });

    it('rate-limit counters are shared: one client’s allowance is spent across A and B together', async () => {
      const limited = await newClient(['client_credentials']);
      const cc = (server: SpawnedServer) =>
        server.http.token({ grant_type: 'client_credentials' }, limited.credentials);
      const statuses = async (server: SpawnedServer, n: number) =>
        (await Promise.all(Array.from({ length: n }, () => cc(server)))).map((r) => r.status);
      // Stay clear of a window's end (windows may be aligned to the clock), so all of this counts in one.
      const intoWindow = Math.floor(Date.now() / 1000) % 60;
      if (intoWindow > 45) await sleep((61 - intoWindow) * 1000);
      // Processes merge their counts into the store in the background (every 250 ms). Wait for the
      // store to hold each process's count (the throttle row of this client's key, see rate-limit.ts):
      // then B must know what A counted.
      const key = `rl:token:c:${sha256(`${limited.credentials.id}\n${limited.credentials.secret}`)}@`;
      const merged = async () =>
        (await tableRows(storage, 'throttle'))
          .filter((row) => row.key.startsWith(key))
          .reduce((total, row) => total + Number(row.count), 0);
      assert.deepEqual(await statuses(a, 20), Array(20).fill(200));
      await waitFor(async () => (await merged()) >= 20, 15_000, 'A never merged its 20 requests');
      assert.deepEqual(await statuses(b, 1), [200]);
      // B's own merge answers it the total, 21, the moment the store has it.
      await waitFor(async () => (await merged()) >= 21, 15_000, 'B never merged its request');
      const atB = await statuses(b, 15);
      assert.equal(atB.filter((s) => s === 200).length, PER_CLIENT - 21, `at B: ${atB.join(',')}`);
      assert.equal(atB.filter((s) => s === 429).length, 15 - (PER_CLIENT - 21));
    });

    it('a MAC nonce used at A is refused at B', async () => {
      const mac = await newClient(['password'], { scopes: ['profile'], token_type: 'mac' });
      await new UserRegistry(storage, systemClock).create({
        username: 'mac-user',
        password: 'a long enough password',
      });
      const issued = (
        await a.http.token(
          {
            grant_type: 'password',
            username: 'mac-user',
            password: 'a long enough password',
            scope: 'profile',
          },
          mac.credentials,
        )
      ).json as { access_token: string; mac_key: string; token_type: string };
      assert.equal(issued.token_type, 'mac');
      // Both processes verify against the issuer's host and port, which the signature covers.
      const header = (nonce: string) => {
        const ts = String(Math.floor(Date.now() / 1000));
        const signature = signMacRequest(
          { id: issued.access_token, ts, nonce, ext: undefined, bodyhash: undefined },
          { method: 'GET', uri: '/v1/users/me', host: new URL(ISSUER).hostname, port: '443' },
          issued.mac_key,
        );
        return `MAC id="${issued.access_token}", ts="${ts}", nonce="${nonce}", mac="${signature}"`;
      };
      const first = header(randomBytes(8).toString('hex'));
      const atA = await a.http.request('/v1/users/me', { headers: { authorization: first } });
      assert.equal(atA.status, 200, atA.text);
      const replayed = await b.http.request('/v1/users/me', { headers: { authorization: first } });
      assert.equal(replayed.status, 401);
      assert.match(String(replayed.headers['www-authenticate']), /^MAC .*error="invalid_token"/);
      // B takes the same token with a fresh nonce: the refusal was the nonce, seen at A.
      const fresh = await b.http.request('/v1/users/me', {
        headers: { authorization: header(randomBytes(8).toString('hex')) },
      });
      assert.equal(fresh.status, 200, fresh.text);
    });

    it('the account lockout counts failed passwords across A and B', async () => {
      const pw = await newClient(['password']);
      await new UserRegistry(storage, systemClock).create({
        username: 'lockme',
        password: 'the right password',
      });
      const attempt = (server: SpawnedServer, password: string) =>
        server.http.token({ grant_type: 'password', username: 'lockme', password }, pw.credentials);
      for (const server of [a, b, a, b, a]) assert.equal((await attempt(server, 'wrong')).status, 401);
      assert.equal((await attempt(b, 'the right password')).status, 429);
      assert.equal((await attempt(a, 'the right password')).status, 429);
    });
  },
);
