import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { requestSource } from '../../src/core/users/account-lockout.js';
import { FormBrowser } from '../helpers/form-browser.js';
import { backends } from '../helpers/backends.js';
import { basicAuth } from '../helpers/https-client.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * Far past PostgreSQL's largest index entry (about 2.7 KB), and random so that compression cannot
 * shrink it under that: a value that became a key would fail the insert.
 */
const LONG = randomBytes(6 * 1024).toString('base64url');

describe('requestSource', () => {
  it('keeps IPv4, counts IPv6 by its /64 and IPv4-mapped IPv6 as IPv4', () => {
    assert.equal(requestSource('203.0.113.7'), '203.0.113.7');
    assert.equal(requestSource('::ffff:203.0.113.7'), '203.0.113.7');
    assert.equal(requestSource('2001:db8:1:2:3:4:5:6'), '2001:db8:1:2::/64');
    assert.equal(requestSource('2001:db8:1:2::9'), '2001:db8:1:2::/64');
    assert.equal(requestSource('2001:db8::1'), '2001:db8:0:0::/64');
    assert.equal(requestSource('fe80::1%eth0'), 'fe80:0:0:0::/64');
    assert.equal(requestSource('::1'), '0:0:0:0::/64');
  });

  it('hashes anything that is no address, so a key never grows with what a client sends', () => {
    const source = requestSource(LONG);
    assert.ok(source.length < 80, source);
    assert.notEqual(requestSource('not an address'), requestSource('not an address either'));
  });
});

for (const backend of backends()) {
  describe(`over-long values never reach a store key (${backend})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(backend, { purgeIntervalSeconds: 0 });
    });
    after(async () => {
      await server.close();
    });

    it('answers an 8 KB user name at /token like a wrong password', async () => {
      const { client, secret } = await server.client({ grant_types: ['password'] });
      const res = await server.http.token(
        { grant_type: 'password', username: LONG, password: 'whatever password' },
        { id: client.id, secret },
      );
      assert.equal(res.status, 401, res.text.slice(0, 200));
      assert.equal((res.json as { error: string }).error, 'invalid_grant');
    });

    it('answers an 8 KB user name at the sign-in page like a wrong password', async () => {
      const res = await new FormBrowser(server).signIn(LONG, 'whatever password');
      assert.equal(res.status, 401, res.text.slice(0, 200));
      assert.match(res.text, /Wrong user name or password/);
    });

    it('answers an 8 KB client id at /token, /introspect, /revoke, /par, /device_authorization and /authorize without a 500', async () => {
      const form = { grant_type: 'client_credentials', client_id: LONG };
      assert.equal((await server.http.request('/token', { form })).status, 401);
      assert.equal(
        (await server.http.token({ grant_type: 'client_credentials' }, { id: LONG, secret: 's' })).status,
        401,
      );
      for (const path of ['/introspect', '/revoke', '/par', '/device_authorization']) {
        assert.equal(
          (await server.http.request(path, { form: { token: 'x', client_id: LONG } })).status,
          401,
        );
        const basic = await server.http.request(path, {
          form: { token: 'x' },
          headers: { authorization: basicAuth(LONG, 's') },
        });
        assert.equal(basic.status, 401);
      }
      const authorize = await server.http.request(`/authorize?response_type=code&client_id=${LONG}`);
      assert.ok(authorize.status >= 400 && authorize.status < 500, String(authorize.status));
    });
  });
}
