import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FormBrowser } from '../helpers/form-browser.js';
import { backends } from '../helpers/backends.js';
import type { HttpResponse, TestHttpClient } from '../helpers/https-client.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const off = { perAddress: 0, perClient: 0 };
/** Loopback has every 127/8 address: the attacker connects from one, the user from 127.0.0.1. */
const ATTACKER_ADDRESS = '127.0.0.2';

for (const backend of backends()) {
  describe(`account lockout counts per user name and source (${backend})`, () => {
    let server: TestServer;
    let attacker: TestHttpClient;
    let credentials: { id: string; secret: string };
    before(async () => {
      server = await startTestServer(backend, {
        purgeIntervalSeconds: 0,
        passwordFailuresPerUsername: 3,
        passwordFailureWindowSeconds: 300,
        rateLimits: { token: off, authorize: off, introspect: off, signIn: off, revoke: off },
      });
      attacker = server.httpFrom(ATTACKER_ADDRESS);
      const { client, secret } = await server.client({ grant_types: ['password'] });
      credentials = { id: client.id, secret };
    });
    after(async () => {
      await server.close();
    });

    const tokenFrom = (http: TestHttpClient, username: string, password: string) =>
      http.token({ grant_type: 'password', username, password }, credentials);
    /** A browser on the sign-in page, connecting through `http`. */
    const browserFrom = (http: TestHttpClient) => new FormBrowser({ http });

    /** Wrong passwords from the attacker until the pair is locked; returns the 429. */
    async function lockFromAttacker(
      attempt: (password: string) => Promise<HttpResponse>,
      rightPassword: string,
    ): Promise<HttpResponse> {
      for (let i = 0; i < 3; i++) assert.equal((await attempt(`wrong ${i}`)).status, 401);
      const locked = await attempt(rightPassword);
      assert.equal(locked.status, 429, 'the attacking source is locked, even with the right password');
      assert.ok(Number(locked.headers['retry-after']) > 0);
      return locked;
    }

    it('at /token: the attacker is locked, the user signs in from another source, again and again', async () => {
      const { user, password } = await server.user();
      const locked = await lockFromAttacker((pw) => tokenFrom(attacker, user.username, pw), password);
      assert.equal((locked.json as { error: string }).error, 'rate_limited');
      assert.equal((await tokenFrom(server.http, user.username, password)).status, 200);
      // Re-sending at every Retry-After keeps only the attacker out.
      for (let round = 0; round < 3; round++) {
        server.clock.advance(Number(locked.headers['retry-after']));
        await lockFromAttacker((pw) => tokenFrom(attacker, user.username, pw), password);
        assert.equal((await tokenFrom(server.http, user.username, password)).status, 200);
      }
      // The user's success clears only the user's own count: the attacker is still locked.
      assert.equal((await tokenFrom(attacker, user.username, password)).status, 429);
    });

    it('at the sign-in page: the attacker is locked, the user signs in from another source', async () => {
      const { user, password } = await server.user();
      const locked = await lockFromAttacker(
        (pw) => browserFrom(attacker).signIn(user.username, pw),
        password,
      );
      assert.match(String(locked.headers['content-type']), /^text\/html/);
      assert.equal((await browserFrom(server.http).signIn(user.username, password)).status, 303);
    });

    it('one allowance per (name, source) whichever way in, and neither way locks the user out', async () => {
      const { user, password } = await server.user();
      // Locked through the password grant: the sign-in page refuses the attacker too.
      await lockFromAttacker((pw) => tokenFrom(attacker, user.username, pw), password);
      assert.equal((await browserFrom(attacker).signIn(user.username, password)).status, 429);
      assert.equal((await browserFrom(server.http).signIn(user.username, password)).status, 303);
      assert.equal((await tokenFrom(server.http, user.username, password)).status, 200);
    });

    it('still locks a source that keeps guessing one name, case aside', async () => {
      const { user, password } = await server.user();
      for (let i = 0; i < 3; i++)
        assert.equal((await tokenFrom(server.http, user.username, 'x')).status, 401);
      assert.equal((await tokenFrom(server.http, user.username.toUpperCase(), password)).status, 429);
      server.clock.advance(301);
      assert.equal((await tokenFrom(server.http, user.username, password)).status, 200);
    });
  });
}
