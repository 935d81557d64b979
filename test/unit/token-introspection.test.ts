import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '../../src/core/model.js';
import { introspectionJson, MAC_KEY_SCOPE } from '../../src/core/tokens/token-introspection.js';
import { addClient, basic } from '../helpers/fakes/fixtures.js';
import { testEngine, type TestEngine } from '../helpers/fakes/test-engine.js';

/**
 * The introspector answers a token that names no user and carries no MAC key from its claims alone,
 * and shares that answer between requests for the same token (token-introspection.ts). What the
 * sharing must never do: outlive the checks made on every request (revocation, the client, expiry),
 * or hand one caller's answer to another where the answer depends on the caller.
 */
describe('introspection answers (RFC 7662 §2.2)', () => {
  let t: TestEngine;
  before(async () => {
    t = await testEngine();
  });
  after(() => t.close());

  async function machineToken(fields: Parameters<typeof addClient>[1] = {}) {
    const machine = await addClient(t, { grantTypes: ['client_credentials'], redirectUris: [], ...fields });
    const response = await t.token({
      authorization: basic(machine.client.id, machine.secret),
      params: { grant_type: 'client_credentials' },
    });
    return { ...machine, token: response.access_token };
  }

  it('the same token twice: the same answer, written once', async () => {
    const { client, token } = await machineToken();
    const first = await t.tokens.introspector.introspect(token, undefined, client);
    const second = await t.tokens.introspector.introspect(token, 'access_token', client);
    assert.equal(first.active, true);
    assert.equal(first.client_id, client.id);
    assert.equal(second, first, 'one shared answer');
    assert.equal(introspectionJson(second), introspectionJson(first));
    assert.deepEqual(JSON.parse(introspectionJson(first)), { ...first });
  });

  it('a shared answer does not outlive revocation, the client, or the token’s expiry', async () => {
    const active = async (token: string, caller: Client) =>
      (await t.tokens.introspector.introspect(token, undefined, caller)).active;

    const revoked = await machineToken();
    assert.equal(await active(revoked.token, revoked.client), true);
    await t.tokens.revoker.revoke(revoked.token, undefined, revoked.client);
    assert.equal(await active(revoked.token, revoked.client), false, 'revoked');

    const deleted = await machineToken();
    const caller = await addClient(t);
    assert.equal(await active(deleted.token, caller.client), true);
    assert.ok(await t.storage.clients.delete(deleted.client.id));
    assert.equal(await active(deleted.token, caller.client), false, 'its client deleted');

    const expiring = await machineToken();
    assert.equal(await active(expiring.token, expiring.client), true);
    t.clock.advance(t.config.accessTokenTtl);
    try {
      assert.equal(await active(expiring.token, expiring.client), false, 'expired');
    } finally {
      t.clock.advance(-t.config.accessTokenTtl);
    }
  });

  it('a MAC token’s answer depends on the caller: its key only for the entitled', async () => {
    const { client, token } = await machineToken({ tokenType: 'mac' });
    const stranger = await addClient(t);
    const entitled = await addClient(t, { scopes: ['read', MAC_KEY_SCOPE] });
    const own = await t.tokens.introspector.introspect(token, undefined, client);
    const toStranger = await t.tokens.introspector.introspect(token, undefined, stranger.client);
    const toEntitled = await t.tokens.introspector.introspect(token, undefined, entitled.client);
    assert.equal(own.token_type, 'mac');
    assert.equal(typeof own.mac_key, 'string');
    assert.equal(toStranger.active, true);
    assert.equal(toStranger.mac_key, undefined, 'never to a caller without the scope');
    assert.equal(introspectionJson(toStranger).includes('mac_key'), false);
    assert.equal(toEntitled.mac_key, own.mac_key);
  });
});
