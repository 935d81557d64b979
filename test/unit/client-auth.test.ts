import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  authenticateClient,
  type ClientAuthMethod,
  type ClientCredentialsInput,
} from '../../src/core/clients/client-auth.js';
import { ManualClock } from '../../src/shared/clock.js';
import {
  addClient,
  basic,
  expectOAuthError,
  wireAnswer,
  type ExpectedError,
} from '../helpers/fakes/fixtures.js';
import { memoryStorage } from '../helpers/fakes/memory-storage.js';
import { START } from '../helpers/fakes/test-engine.js';

const CONFIDENTIAL = 'conf';
const PUBLIC = 'pub';
// An id and a secret that need form-urlencoding in HTTP Basic (RFC 6749 §2.3.1), as an imported or
// hand-provisioned client could have.
const SPECIAL = 'svc:one/ü+%&=x y';
const SPECIAL_SECRET = 'pa:ss+wo/rd%&=é ~!';
const SECRET = `secret-of-${CONFIDENTIAL}`;

const WRONG = 'unknown client or wrong credentials';
const MALFORMED = 'malformed Basic credentials';
const b64 = (text: string) => Buffer.from(text).toString('base64');

interface Row {
  name: string;
  input: Partial<ClientCredentialsInput>;
  expected: { client: string; method: ClientAuthMethod } | ExpectedError;
}

const ROWS: Row[] = [
  // HTTP Basic (RFC 6749 §2.3.1)
  {
    name: 'Basic with the right secret',
    input: { authorization: basic(CONFIDENTIAL, SECRET) },
    expected: { client: CONFIDENTIAL, method: 'client_secret_basic' },
  },
  {
    name: 'Basic: the scheme name is case-insensitive',
    input: { authorization: basic(CONFIDENTIAL, SECRET).replace(/^Basic/, 'bAsIc') },
    expected: { client: CONFIDENTIAL, method: 'client_secret_basic' },
  },
  {
    name: 'Basic: id and secret are form-urlencoded before base64 (RFC 6749 §2.3.1)',
    input: { authorization: basic(SPECIAL, SPECIAL_SECRET) },
    expected: { client: SPECIAL, method: 'client_secret_basic' },
  },
  {
    name: 'Basic: the raw, unencoded id and secret are not what §2.3.1 sends',
    input: { authorization: `Basic ${b64(`${SPECIAL}:${SPECIAL_SECRET}`)}` },
    expected: { code: 'invalid_client', status: 401 },
  },
  {
    name: 'Basic: "+" in the encoded form is a space, so a raw "+" secret is wrong',
    input: { authorization: `Basic ${b64(`${CONFIDENTIAL}:${SECRET.replace(/-/g, '+')}`)}` },
    expected: { code: 'invalid_client', status: 401, description: WRONG },
  },
  {
    name: 'Basic with a client_id in the form naming the same client',
    input: { authorization: basic(CONFIDENTIAL, SECRET), clientId: CONFIDENTIAL },
    expected: { client: CONFIDENTIAL, method: 'client_secret_basic' },
  },
  {
    name: 'Basic with a client_id in the form naming another client',
    input: { authorization: basic(CONFIDENTIAL, SECRET), clientId: PUBLIC },
    expected: {
      code: 'invalid_client',
      status: 401,
      description: 'client_id does not match the authenticated client',
    },
  },
  {
    name: 'Basic and client_secret in the form at once: one method only (RFC 6749 §2.3)',
    input: { authorization: basic(CONFIDENTIAL, SECRET), clientId: CONFIDENTIAL, clientSecret: SECRET },
    expected: {
      code: 'invalid_request',
      status: 400,
      description: 'use one client authentication method, not both Basic and client_secret',
    },
  },
  {
    name: 'Basic with a wrong secret',
    input: { authorization: basic(CONFIDENTIAL, `${SECRET}x`) },
    expected: { code: 'invalid_client', status: 401, description: WRONG },
  },
  {
    name: 'Basic naming an unknown client: the same answer as a wrong secret',
    input: { authorization: basic('no-such-client', SECRET) },
    expected: { code: 'invalid_client', status: 401, description: WRONG },
  },
  // Malformed Basic
  {
    name: 'malformed Basic: no credentials after the scheme',
    input: { authorization: 'Basic ' },
    expected: { code: 'invalid_client', status: 401, description: MALFORMED },
  },
  {
    name: 'malformed Basic: not base64',
    input: { authorization: 'Basic !!!' },
    expected: { code: 'invalid_client', status: 401, description: MALFORMED },
  },
  {
    name: 'malformed Basic: no colon',
    input: { authorization: `Basic ${b64('no-colon')}` },
    expected: { code: 'invalid_client', status: 401, description: MALFORMED },
  },
  {
    name: 'malformed Basic: a broken percent-encoding',
    input: { authorization: `Basic ${b64('%zz:secret')}` },
    expected: { code: 'invalid_client', status: 401, description: MALFORMED },
  },
  {
    name: 'the bare word "Basic" is no Basic credentials at all',
    input: { authorization: 'Basic' },
    expected: { code: 'invalid_client', status: 401, description: 'client authentication required' },
  },
  // Credentials in the body (RFC 6749 §2.3.1, client_secret_post)
  {
    name: 'client_id and client_secret in the form',
    input: { clientId: CONFIDENTIAL, clientSecret: SECRET },
    expected: { client: CONFIDENTIAL, method: 'client_secret_post' },
  },
  {
    name: 'client_secret_post carries special characters through ordinary form decoding',
    input: { clientId: SPECIAL, clientSecret: SPECIAL_SECRET },
    expected: { client: SPECIAL, method: 'client_secret_post' },
  },
  {
    name: 'a wrong secret in the form',
    input: { clientId: CONFIDENTIAL, clientSecret: `${SECRET}x` },
    expected: { code: 'invalid_client', status: 401, description: WRONG },
  },
  {
    name: 'an empty secret in the form',
    input: { clientId: CONFIDENTIAL, clientSecret: '' },
    expected: { code: 'invalid_client', status: 401, description: WRONG },
  },
  {
    name: 'a confidential client sending only its client_id',
    input: { clientId: CONFIDENTIAL },
    expected: { code: 'invalid_client', status: 401, description: WRONG },
  },
  {
    name: 'an unknown client_id without a secret',
    input: { clientId: 'no-such-client' },
    expected: { code: 'invalid_client', status: 401, description: WRONG },
  },
  {
    name: 'an empty client_id',
    input: { clientId: '', clientSecret: SECRET },
    expected: { code: 'invalid_client', status: 401, description: WRONG },
  },
  {
    name: 'no client authentication at all',
    input: {},
    expected: { code: 'invalid_client', status: 401, description: 'client authentication required' },
  },
  {
    name: 'a Bearer header is not client authentication',
    input: { authorization: 'Bearer some-token' },
    expected: { code: 'invalid_client', status: 401, description: 'client authentication required' },
  },
  // Public clients identify themselves by client_id alone (RFC 6749 §2.1, §3.2.1).
  {
    name: 'a public client by its client_id alone',
    input: { clientId: PUBLIC },
    expected: { client: PUBLIC, method: 'none' },
  },
  {
    name: 'a public client presenting a secret in the form',
    input: { clientId: PUBLIC, clientSecret: 'guess' },
    expected: { code: 'invalid_client', status: 401, description: 'public clients have no secret' },
  },
  {
    name: 'a public client presenting Basic with an empty secret',
    input: { authorization: basic(PUBLIC, '') },
    expected: { code: 'invalid_client', status: 401, description: 'public clients have no secret' },
  },
];

async function clientStore() {
  const engine = { storage: memoryStorage(), clock: new ManualClock(START) };
  await addClient(engine, { id: CONFIDENTIAL });
  await addClient(engine, { id: PUBLIC, isPublic: true });
  await addClient(engine, { id: SPECIAL, secret: SPECIAL_SECRET });
  return engine.storage.clients;
}

describe('client authentication (RFC 6749 §2.3)', () => {
  for (const row of ROWS) {
    it(row.name, async () => {
      const clients = await clientStore();
      const input: ClientCredentialsInput = {
        authorization: undefined,
        clientId: undefined,
        clientSecret: undefined,
        ...row.input,
      };
      const expected = row.expected;
      if ('client' in expected) {
        const { client, method } = await authenticateClient(input, clients);
        assert.equal(client.id, expected.client);
        assert.equal(method, expected.method);
        return;
      }
      const error = await expectOAuthError(authenticateClient(input, clients), expected);
      // On the wire (docs/decisions.md, decision 1): every 401 carries the Basic challenge that
      // RFC 6749 §5.2 requires when the client tried Basic; nothing else does.
      const answer = wireAnswer(error);
      assert.equal(answer.status, expected.status);
      assert.deepEqual(answer.body, { error: expected.code, error_description: error.description });
      assert.equal(
        answer.headers['www-authenticate'],
        expected.status === 401 ? 'Basic realm="gatehouse"' : undefined,
      );
    });
  }
});
