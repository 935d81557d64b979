import assert from 'node:assert/strict';
import { connect } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { backends } from '../helpers/backends.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { CookieJar, hidden } from '../helpers/cookie-jar.js';

const off = { perAddress: 0, perClient: 0 };

/** Sends raw bytes over TLS and returns the status line: for requests a client library would refuse. */
function rawStatus(server: TestServer, head: string): Promise<string> {
  const { port } = new URL(server.http.baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(
      { host: '127.0.0.1', port: Number(port), ca: server.ca, servername: 'localhost' },
      () => socket.end(head),
    );
    let text = '';
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
    socket.on('end', () => resolve(text.split('\r\n', 1)[0] ?? ''));
    socket.on('error', reject);
  });
}

for (const backend of backends()) {
  describe(`request rate limits (${backend})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(backend, {
        purgeIntervalSeconds: 0,
        rateLimitWindowSeconds: 60,
        rateLimits: {
          token: { perAddress: 8, perClient: 3 },
          authorize: { perAddress: 2, perClient: 0 },
          introspect: { perAddress: 2, perClient: 0 },
          signIn: { perAddress: 2, perClient: 0 },
        },
      });
    });
    after(async () => {
      await server.close();
    });

    it('limits /token per client, and a caller without the secret cannot spend the client’s allowance', async () => {
      const { client, secret } = await server.client({ grant_types: ['client_credentials'] });
      const cc = { grant_type: 'client_credentials' };
      // Someone who knows only the client id: refused, then limited, on a counter of their own.
      const forged = [];
      for (let i = 0; i < 4; i++)
        forged.push((await server.http.token(cc, { id: client.id, secret: 'guess' })).status);
      assert.deepEqual(forged, [401, 401, 401, 429]);
      // The client itself still has its whole allowance.
      for (let i = 0; i < 3; i++)
        assert.equal((await server.http.token(cc, { id: client.id, secret })).status, 200);
      const limited = await server.http.token(cc, { id: client.id, secret });
      assert.equal(limited.status, 429);
      const retryAfter = Number(limited.headers['retry-after']);
      assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
      assert.equal((limited.json as { error: string }).error, 'rate_limited');
      // The next window starts afresh.
      server.clock.advance(61);
      assert.equal((await server.http.token(cc, { id: client.id, secret })).status, 200);
    });

    it('limits /token per address, whatever the client', async () => {
      server.clock.advance(61);
      const statuses = [];
      for (let i = 0; i < 9; i++) {
        const { client, secret } = await server.client({ grant_types: ['client_credentials'] });
        statuses.push(
          (await server.http.token({ grant_type: 'client_credentials' }, { id: client.id, secret })).status,
        );
      }
      assert.deepEqual(statuses, [200, 200, 200, 200, 200, 200, 200, 200, 429]);
      const text = (await server.http.request('/metrics')).text;
      assert.match(text, /gatehouse_throttled_total\{route="\/token",limit="address"\} 1/);
      assert.match(text, /gatehouse_throttled_total\{route="\/token",limit="client"\} 2/);
    });

    it('limits /authorize and the sign-in page per address with a page, /introspect with JSON', async () => {
      const authorize = [];
      for (let i = 0; i < 3; i++)
        authorize.push(await server.http.request('/authorize?response_type=code&client_id=x'));
      assert.notEqual(authorize[1]?.status, 429);
      assert.equal(authorize[2]?.status, 429);
      assert.match(String(authorize[2]?.headers['content-type']), /^text\/html/);
      assert.ok(Number(authorize[2]?.headers['retry-after']) >= 1);

      const signIn = [];
      for (let i = 0; i < 3; i++) {
        signIn.push(
          await server.http.request('/sign-in', { form: { username: 'a', password: 'b', csrf_token: 'c' } }),
        );
      }
      assert.notEqual(signIn[1]?.status, 429);
      assert.equal(signIn[2]?.status, 429);

      const introspect = [];
      for (let i = 0; i < 3; i++)
        introspect.push(await server.http.request('/introspect', { form: { token: 'x' } }));
      assert.notEqual(introspect[1]?.status, 429);
      assert.equal(introspect[2]?.status, 429);
      assert.equal((introspect[2]?.json as { error: string }).error, 'rate_limited');
    });
  });

  describe(`account lockout and size limits (${backend})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(
        backend,
        {
          purgeIntervalSeconds: 0,
          passwordFailuresPerUsername: 3,
          passwordFailureWindowSeconds: 300,
          maxParameterBytes: 4 * 1024,
          rateLimits: { token: off, authorize: off, introspect: off, signIn: off },
        },
        // The header-size bound is the socket's (rawStatus).
        { transport: 'https' },
      );
    });
    after(async () => {
      await server.close();
    });

    it('locks a user name after repeated wrong passwords, refuses even the right one, then lets it in again', async () => {
      const { client, secret } = await server.client({ grant_types: ['password'] });
      const { user, password } = await server.user();
      const attempt = (pw: string, username = user.username) =>
        server.http.token({ grant_type: 'password', username, password: pw }, { id: client.id, secret });
      for (let i = 0; i < 3; i++) assert.equal((await attempt('wrong')).status, 401);
      // The name is matched whatever its case: no fresh allowance for USER vs user.
      const locked = await attempt(password, user.username.toUpperCase());
      assert.equal(locked.status, 429);
      assert.ok(Number(locked.headers['retry-after']) > 0);
      assert.equal((await attempt(password)).status, 429);
      server.clock.advance(301);
      assert.equal((await attempt(password)).status, 200);
      // A success starts the count again.
      assert.equal((await attempt('wrong')).status, 401);
      assert.equal((await attempt(password)).status, 200);
      const text = (await server.http.request('/metrics')).text;
      assert.match(text, /gatehouse_throttled_total\{route="\/token",limit="password_attempts"\} 2/);
    });

    it('shares one allowance per user name between the password grant and the sign-in page', async () => {
      const { client, secret } = await server.client({ grant_types: ['password'] });
      const { user, password } = await server.user();
      const grant = (pw: string) =>
        server.http.token(
          { grant_type: 'password', username: user.username, password: pw },
          { id: client.id, secret },
        );
      const jar = new CookieJar();
      const signIn = async (pw: string) => {
        const page = await jar.get(server.http, '/sign-in');
        return jar.post(server.http, '/sign-in', {
          csrf_token: hidden(page, 'csrf_token'),
          next: hidden(page, 'next'),
          username: user.username,
          password: pw,
        });
      };
      assert.equal((await grant('wrong')).status, 401);
      assert.equal((await signIn('wrong')).status, 401);
      assert.equal((await grant('wrong')).status, 401);
      // Three attempts spent, two ways in: both refuse the right password now.
      assert.equal((await signIn(password)).status, 429);
      assert.equal((await grant(password)).status, 429);
      server.clock.advance(301);
      assert.equal((await signIn(password)).status, 303);
    });

    it('answers a body over 16 KiB with 413 at the token endpoint', async () => {
      const res = await server.http.request('/token', {
        body: 'grant_type=client_credentials&pad=' + 'a'.repeat(16 * 1024),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      assert.equal(res.status, 413);
      assert.equal((res.json as { error: string }).error, 'invalid_request');
    });

    it('refuses too many parameters and over-long values with 400', async () => {
      const many: Record<string, string> = { grant_type: 'client_credentials' };
      for (let i = 0; i < 64; i++) many[`p${i}`] = 'x';
      const tooMany = await server.http.request('/token', { form: many });
      assert.equal(tooMany.status, 400);
      assert.equal((tooMany.json as { error: string }).error, 'invalid_request');
      // This server bounds values at 4 KiB (the default is the body limit, 16 KiB).
      const long = await server.http.request('/token', {
        form: { grant_type: 'client_credentials', scope: 'a'.repeat(4 * 1024 + 1) },
      });
      assert.equal(long.status, 400);
      const fits = await server.http.request('/token', {
        form: { grant_type: 'client_credentials', scope: 'a'.repeat(4 * 1024) },
      });
      assert.equal(fits.status, 401, 'within the bound: on to client authentication');
      const longQuery = await server.http.request(
        `/authorize?response_type=code&state=${'s'.repeat(4 * 1024 + 1)}`,
      );
      assert.equal(longQuery.status, 400);
      const query = Array.from({ length: 65 }, (_, i) => `p${i}=x`).join('&');
      assert.equal((await server.http.request(`/authorize?${query}`)).status, 400);
    });

    it('refuses NUL in parameters, path segments and JSON with 400 (PostgreSQL cannot store it)', async () => {
      const { client, secret } = await server.client({
        grant_types: ['client_credentials'],
        scopes: ['admin'],
      });
      const admin = (
        await server.http.token(
          { grant_type: 'client_credentials', scope: 'admin' },
          { id: client.id, secret },
        )
      ).json as { access_token: string };
      const bearer = { authorization: `Bearer ${admin.access_token}` };
      const answers = [
        await server.http.request('/token', {
          form: { grant_type: 'client_credentials', client_id: 'a\u0000b' },
        }),
        await server.http.request('/v1/clients?name=%00', { headers: bearer }),
        await server.http.request('/v1/clients/%00', { headers: bearer }),
        await server.http.request('/v1/scopes', {
          method: 'POST',
          body: JSON.stringify({ name: 'n', description: 'a\u0000b' }),
          headers: { ...bearer, 'content-type': 'application/json' },
        }),
      ];
      assert.deepEqual(
        answers.map((res) => res.status),
        [400, 400, 400, 400],
        answers.map((res) => res.text).join('\n'),
      );
    });

    it('answers headers over 16 KiB with 431', async () => {
      const status = await rawStatus(
        server,
        `GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Pad: ${'a'.repeat(17 * 1024)}\r\nConnection: close\r\n\r\n`,
      );
      assert.match(status, /^HTTP\/1\.1 431/);
      const fine = await rawStatus(
        server,
        `GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`,
      );
      assert.match(fine, /^HTTP\/1\.1 200/);
    });
  });
}
