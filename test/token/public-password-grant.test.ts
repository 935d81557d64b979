import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { backends } from '../helpers/backends.js';
import type { TestHttpClient } from '../helpers/https-client.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { tableRows } from '../helpers/store-sql.js';
import { assertOAuthError, assertTokenSuccess } from '../helpers/token-responses.js';

const off = { perAddress: 0, perClient: 0 };
const ATTACKER_ADDRESS = '127.0.0.2';

describe('GATEHOUSE_ALLOW_PUBLIC_PASSWORD_GRANT', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-config-'));
  after(() => rmSync(dataDir, { recursive: true, force: true }));
  const load = (value: string | undefined) =>
    loadConfig(
      { dataDir, secret: Buffer.alloc(32, 1) },
      value === undefined ? {} : { GATEHOUSE_ALLOW_PUBLIC_PASSWORD_GRANT: value },
    ).allowPublicPasswordGrant;

  it('is off unless set to exactly true', () => {
    assert.equal(load(undefined), false);
    assert.equal(load(''), false);
    assert.equal(load('false'), false);
    assert.equal(load('true'), true);
  });

  it('refuses anything else, naming the variable', () => {
    for (const value of ['yes', 'True', '1', 'on']) {
      assert.throws(() => load(value), /GATEHOUSE_ALLOW_PUBLIC_PASSWORD_GRANT must be true or false/);
    }
  });
});

for (const backend of backends()) {
  describe(`the password grant for public clients (${backend})`, () => {
    it('is refused by default with unauthorized_client, before any password is checked', async () => {
      const server = await startTestServer(backend, { purgeIntervalSeconds: 0 });
      try {
        const { client } = await server.client({ public: true, grant_types: ['password'], name: 'app' });
        const { user, password } = await server.user();
        const res = await server.http.request('/token', {
          form: { grant_type: 'password', username: user.username, password, client_id: client.id },
        });
        assertOAuthError(res, 400, 'unauthorized_client');
        // No password was checked, so nothing was counted against the user name.
        const rows = await tableRows(server.store.storage, 'throttle');
        assert.deepEqual(
          rows.filter((row) => row.key.startsWith('password:')),
          [],
        );
      } finally {
        await server.close();
      }
    });

    describe('when the operator allows it', () => {
      let server: TestServer;
      let attacker: TestHttpClient;
      before(async () => {
        server = await startTestServer(backend, {
          purgeIntervalSeconds: 0,
          allowPublicPasswordGrant: true,
          passwordFailuresPerSource: 10,
          rateLimits: { token: off, authorize: off, introspect: off, signIn: off, revoke: off },
        });
        attacker = server.httpFrom(ATTACKER_ADDRESS);
      });
      after(async () => {
        await server.close();
      });

      it('works, and wrong passwords over throw-away names stop only the source sending them', async () => {
        const { client } = await server.client({ public: true, grant_types: ['password'], name: 'app' });
        const login = (http: TestHttpClient, username: string, password: string) =>
          http.request('/token', {
            form: { grant_type: 'password', username, password, client_id: client.id },
          });
        const { user, password } = await server.user();
        assertTokenSuccess(await login(server.http, user.username, password));
        // Wrong passwords spread over names, two a name (never reaching a name's own lockout).
        const statuses: number[] = [];
        for (let i = 0; i < 12; i++)
          statuses.push((await login(attacker, `throw-away-${i >> 1}`, 'x')).status);
        assert.deepEqual(statuses, [...Array<number>(10).fill(401), 429, 429]);
        // The client keeps working for everybody else.
        assertTokenSuccess(await login(server.http, user.username, password));
        const other = await server.user();
        assertTokenSuccess(await login(server.http, other.user.username, other.password));
      });
    });
  });
}
