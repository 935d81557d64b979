import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ClientRegistry } from '../../src/core/clients/client-registry.js';
import { UserRegistry } from '../../src/core/users/user-registry.js';
import { systemClock } from '../../src/shared/clock.js';
import { createSqlStorage } from '../../src/storage/sql/index.js';
import { basicAuth, type HttpResponse } from '../helpers/https-client.js';
import { CookieJar, hidden } from '../helpers/cookie-jar.js';
import { spawnServer, TEST_SECRET } from '../helpers/spawned-server.js';

const REDIRECT = 'https://app.test/cb';
const METRICS_TOKEN = `mt_${randomBytes(16).toString('base64url')}`;

/**
 * Runs every flow the server has against a real process logging at info level, collecting every
 * secret that crossed the wire, then looks for each of them in everything the process wrote.
 */
describe('logs never contain secrets', () => {
  it('no client secret, password, code, verifier, token, cookie or server secret appears in the logs', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-logs-'));
    const storage = createSqlStorage({ dataDir });
    await storage.migrate();
    const secrets = new Set<string>([TEST_SECRET, METRICS_TOKEN]);
    const keep = (...values: (string | undefined)[]) => {
      for (const value of values) if (value !== undefined && value.length >= 8) secrets.add(value);
    };
    const keepTokens = (res: HttpResponse) => {
      const body = res.json as Record<string, string> | undefined;
      keep(body?.access_token, body?.refresh_token, body?.mac_key, body?.client_secret);
      // A JWT's signature alone is as good as the token for a forger's purposes.
      if (body?.access_token) keep(body.access_token.split('.')[2]);
      return res;
    };

    const app = await new ClientRegistry(storage, systemClock).create({
      name: 'logged app',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'implicit', 'refresh_token', 'password', 'client_credentials'],
      scopes: ['read', 'profile'],
    });
    const admin = await new ClientRegistry(storage, systemClock).create({
      name: 'admin',
      grant_types: ['client_credentials'],
      scopes: ['admin'],
    });
    const macClient = await new ClientRegistry(storage, systemClock).create({
      name: 'mac app',
      grant_types: ['client_credentials'],
      token_type: 'mac',
    });
    keep(app.secret, admin.secret, macClient.secret);
    const password = `pw-${randomBytes(12).toString('base64url')}`;
    keep(password);
    await new UserRegistry(storage, systemClock).create({ username: 'logged-user', password });
    await storage.close();

    const server = await spawnServer({
      dataDir,
      logLevel: 'info',
      env: { GATEHOUSE_METRICS_TOKEN: METRICS_TOKEN },
    });
    const http = server.http;
    const creds = { id: app.client.id, secret: app.secret as string };
    const basic = { authorization: basicAuth(creds.id, creds.secret) };
    let requests = 0;
    const count = <T>(value: T) => {
      requests++;
      return value;
    };
    try {
      // Client credentials: right, wrong, secret in the body, MAC.
      keepTokens(count(await http.token({ grant_type: 'client_credentials', scope: 'read' }, creds)));
      count(
        await http.token(
          { grant_type: 'client_credentials' },
          { id: creds.id, secret: 'wrong-secret-value' },
        ),
      );
      keepTokens(
        count(
          await http.request('/token', {
            form: { grant_type: 'client_credentials', client_id: creds.id, client_secret: creds.secret },
          }),
        ),
      );
      keepTokens(
        count(
          await http.token(
            { grant_type: 'client_credentials' },
            { id: macClient.client.id, secret: macClient.secret as string },
          ),
        ),
      );

      // Password grant: right, wrong, then locked out.
      const pw = keepTokens(
        count(
          await http.token(
            { grant_type: 'password', username: 'logged-user', password, scope: 'profile' },
            creds,
          ),
        ),
      );
      assert.equal(pw.status, 200);
      for (let i = 0; i < 6; i++) {
        count(
          await http.token(
            { grant_type: 'password', username: 'victim', password: `${password}-guess${i}` },
            creds,
          ),
        );
        keep(`${password}-guess${i}`);
      }

      // Browser: sign in (wrong, then right), consent, code with PKCE; implicit.
      const jar = new CookieJar();
      const verifier = randomBytes(32).toString('base64url');
      keep(verifier);
      const challenge = createHash('sha256').update(verifier).digest('base64url');
      const query = new URLSearchParams({
        response_type: 'code',
        client_id: creds.id,
        redirect_uri: REDIRECT,
        scope: 'read profile',
        state: 'state-123',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      }).toString();
      const signInPage = count(await jar.get(http, `/authorize?${query}`));
      count(
        await jar.post(http, '/sign-in', {
          csrf_token: hidden(signInPage, 'csrf_token'),
          next: hidden(signInPage, 'next'),
          username: 'logged-user',
          password: `${password}-typo`,
        }),
      );
      keep(`${password}-typo`);
      const signedIn = count(
        await jar.post(http, '/sign-in', {
          csrf_token: hidden(signInPage, 'csrf_token'),
          next: hidden(signInPage, 'next'),
          username: 'logged-user',
          password,
        }),
      );
      assert.equal(signedIn.status, 303);
      const consent = count(await jar.get(http, `/authorize?${query}`));
      keep(hidden(consent, 'csrf_token'));
      const decided = count(
        await jar.post(http, '/consent', {
          csrf_token: hidden(consent, 'csrf_token'),
          request: hidden(consent, 'request'),
          scope: ['read', 'profile'],
          lifetime: 'forever',
          decision: 'allow',
        }),
      );
      assert.equal(decided.status, 302);
      const code = new URL(String(decided.headers.location)).searchParams.get('code') as string;
      keep(code);
      const redeemed = keepTokens(
        count(
          await http.token(
            { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier },
            creds,
          ),
        ),
      );
      assert.equal(redeemed.status, 200);

      const implicitQuery = new URLSearchParams({
        response_type: 'token',
        client_id: creds.id,
        redirect_uri: REDIRECT,
        scope: 'read',
        state: 'st',
      }).toString();
      const implicitPage = count(await jar.get(http, `/authorize?${implicitQuery}`));
      if (implicitPage.status === 302) {
        keep(
          new URLSearchParams(new URL(String(implicitPage.headers.location)).hash.slice(1)).get(
            'access_token',
          ) ?? undefined,
        );
      } else {
        const implicit = count(
          await jar.post(http, '/consent', {
            csrf_token: hidden(implicitPage, 'csrf_token'),
            request: hidden(implicitPage, 'request'),
            scope: 'read',
            lifetime: 'forever',
            decision: 'allow',
          }),
        );
        const fragment = new URLSearchParams(new URL(String(implicit.headers.location)).hash.slice(1));
        keep(fragment.get('access_token') ?? undefined);
        assert.ok(fragment.get('access_token'), 'the implicit flow issued a token');
      }
      count(await jar.get(http, '/account/apps'));
      for (const value of jar.values()) keep(value);

      // Refresh, then the same refresh token again.
      const { refresh_token: refreshToken, access_token: accessToken } = redeemed.json as Record<
        string,
        string
      >;
      const refreshed = keepTokens(
        count(
          await http.token({ grant_type: 'refresh_token', refresh_token: refreshToken as string }, creds),
        ),
      );
      assert.equal(refreshed.status, 200);
      count(await http.token({ grant_type: 'refresh_token', refresh_token: refreshToken as string }, creds));
      // The code again: refused, and (replay rule) the grant's tokens are revoked.
      count(
        await http.token(
          { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier },
          creds,
        ),
      );

      // Introspection, revocation, the REST API, with good, bad and misplaced tokens.
      const newAccess = (refreshed.json as Record<string, string>).access_token as string;
      const newRefresh = (refreshed.json as Record<string, string>).refresh_token as string;
      count(await http.request('/introspect', { form: { token: newAccess }, headers: basic }));
      count(
        await http.request('/introspect', {
          form: { token: newRefresh, token_type_hint: 'refresh_token' },
          headers: basic,
        }),
      );
      count(await http.request('/introspect', { form: { token: newAccess } }));
      const pwAccess = (pw.json as Record<string, string>).access_token as string;
      count(await http.request('/v1/users/me', { headers: { authorization: `Bearer ${pwAccess}` } }));
      count(await http.request(`/v1/users/me?access_token=${pwAccess}`));
      count(await http.request('/v1/users/me', { headers: { authorization: `Bearer ${pwAccess}x` } }));
      count(await http.request('/revoke', { form: { token: accessToken as string }, headers: basic }));
      count(await http.request('/revoke', { form: { token: newRefresh }, headers: basic }));

      const adminToken = keepTokens(
        count(
          await http.token(
            { grant_type: 'client_credentials', scope: 'admin' },
            { id: admin.client.id, secret: admin.secret as string },
          ),
        ),
      );
      const bearer = { authorization: `Bearer ${(adminToken.json as Record<string, string>).access_token}` };
      const json = { ...bearer, 'content-type': 'application/json' };
      const created = count(
        await http.request('/v1/clients', {
          method: 'POST',
          body: JSON.stringify({ name: 'via api', grant_types: ['client_credentials'] }),
          headers: json,
        }),
      );
      assert.equal(created.status, 201);
      keep((created.json as Record<string, string>).client_secret);
      const apiPassword = `api-${randomBytes(12).toString('base64url')}`;
      keep(apiPassword);
      count(
        await http.request('/v1/users', {
          method: 'POST',
          body: JSON.stringify({ username: 'api-user', password: apiPassword }),
          headers: json,
        }),
      );
      const createdId = (created.json as Record<string, string>).client_id as string;
      const rotated = count(
        await http.request(`/v1/clients/${createdId}/rotate-secret`, { method: 'POST', headers: bearer }),
      );
      keep((rotated.json as Record<string, string> | undefined)?.client_secret);

      // Malformed and oversized requests carrying secrets.
      count(
        await http.request('/token', {
          body: `grant_type=client_credentials&client_id=${creds.id}&client_secret=${creds.secret}&pad=${'a'.repeat(17_000)}`,
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        }),
      );
      count(
        await http.request('/token', {
          body: JSON.stringify({ grant_type: 'password', username: 'logged-user', password }),
          headers: { 'content-type': 'application/json' },
        }),
      );
      count(
        await http.request('/token', { form: { grant_type: 'password', password, password2: password } }),
      );
      count(
        await http.request(
          `/authorize?response_type=code&client_id=${creds.id}&redirect_uri=https://evil.test/?s=${creds.secret}`,
        ),
      );
      count(await http.request('/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } }));
      count(await http.request('/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}-wrong` } }));
    } finally {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }

    const output = server.output();
    // The logs are real: one JSON line per request, each with a request id.
    const requestLines = output
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((entry) => entry.msg === 'request');
    assert.ok(requestLines.length >= requests, `request lines ${requestLines.length}, requests ${requests}`);
    assert.ok(requestLines.every((entry) => typeof entry.reqId === 'string' && entry.reqId !== ''));

    assert.ok(secrets.size >= 25, `secrets collected: ${secrets.size}`);
    const leaked = [...secrets].filter((secret) => output.includes(secret));
    assert.deepEqual(
      leaked.map((secret) => `${secret.slice(0, 6)}… (${secret.length} chars)`),
      [],
      'secrets found in the logs',
    );
  });
});
