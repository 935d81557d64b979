import assert from 'node:assert/strict';
import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { describe, it } from 'node:test';
import { ResourceServer, TokenError } from 'gatehouse-oauth-resource-server';
import { extractCredential } from 'gatehouse-oauth-resource-server/rfc6750';

/**
 * ResourceServer leaves the RFC 6750 §2.1 syntax check of a header token until the token is refused
 * (a JWT that verifies has the syntax). The refusals must be those of the eager check: a malformed
 * header is invalid_request with the same description, whatever else is wrong with its token, and it
 * causes no JWKS fetch.
 */

const ISSUER = 'https://as.test';
const NOW = 1_800_000_000;
const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const jwk = { ...publicKey.export({ format: 'jwk' }), kid: 'k1', alg: 'ES256', use: 'sig' };
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

function token(kid = 'k1'): string {
  const input = `${b64({ alg: 'ES256', typ: 'at+jwt', kid })}.${b64({
    iss: ISSUER,
    aud: ISSUER,
    sub: 'user-1',
    client_id: 'client-1',
    iat: NOW,
    exp: NOW + 600,
    jti: randomUUID(),
    scope: 'read',
  })}`;
  const signature = sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' });
  return `${input}.${signature.toString('base64url')}`;
}

function server(): { rs: ResourceServer; fetches: () => number } {
  let fetches = 0;
  const body = JSON.stringify({ keys: [jwk] });
  const rs = new ResourceServer({
    issuer: ISSUER,
    jwksUri: `${ISSUER}/jwks`,
    jwksCooldownSeconds: 0,
    now: () => NOW,
    verifiedTokenCacheSize: 0,
    dpop: { origin: 'https://api.test' },
    fetch: async () => {
      fetches++;
      return new Response(body, { status: 200 });
    },
  });
  return { rs, fetches: () => fetches };
}

type Outcome = { ok: true } | { ok: false; code: string | undefined; description: string };

async function viaLibrary(rs: ResourceServer, authorization: string): Promise<Outcome> {
  try {
    await rs.authorize({ method: 'GET', url: '/notes', host: 'api.test', protocol: 'https', authorization });
    return { ok: true };
  } catch (error) {
    assert.ok(error instanceof TokenError, String(error));
    return { ok: false, code: error.code, description: error.description };
  }
}

/** The eager check's verdict on the header alone: its refusal, or undefined when the syntax is fine. */
function eagerRefusal(authorization: string): Outcome | undefined {
  try {
    extractCredential({
      authorization,
      formBody: undefined,
      method: 'GET',
      query: undefined,
      allowQuery: false,
    });
    return undefined;
  } catch (error) {
    assert.ok(error instanceof TokenError);
    return { ok: false, code: error.code, description: error.description };
  }
}

describe('resource server: the header token syntax, checked when the token is refused', () => {
  const valid = token();
  const unknownKid = token('rotated-in');
  const headers = [
    `Bearer ${valid}`,
    `bearer   ${valid}`,
    `Bearer ${valid}==`,
    `Bearer ${valid} extra`,
    `Bearer ${unknownKid} x`,
    `Bearer ${unknownKid}!`,
    `Bearer ${valid.replace('.', ',')}`,
    'Bearer a b',
    'Bearer',
    'Bearer   ',
    'Bearer ~+/=',
    'Bearer é',
    `DPoP ${valid} x`,
    `DPoP ${unknownKid}!`,
    'DPoP a\tb',
  ];

  for (const authorization of headers) {
    it(`answers as the eager check: ${authorization.slice(0, 24)}…${authorization.slice(-6)}`, async () => {
      const { rs, fetches } = server();
      // The first fetch (the set, on first use) is not what is under test.
      await viaLibrary(rs, `Bearer ${token()}`);
      const before = fetches();
      const outcome = await viaLibrary(rs, authorization);
      const eager = eagerRefusal(authorization);
      if (eager !== undefined) {
        assert.deepEqual(outcome, eager);
        assert.equal(fetches(), before, 'a malformed header caused a JWKS fetch');
      } else {
        assert.notEqual(outcome.ok === false && outcome.code, 'invalid_request');
      }
    });
  }

  it('accepts a well-formed token (the check is not skipped by refusing everything)', async () => {
    const { rs } = server();
    assert.deepEqual(await viaLibrary(rs, `Bearer ${valid}`), { ok: true });
  });

  it('with a second credential in the body, the header is checked first, as before', async () => {
    const { rs } = server();
    await assert.rejects(
      rs.authorize({
        method: 'POST',
        url: '/notes',
        host: 'api.test',
        protocol: 'https',
        authorization: 'Bearer a b',
        formBody: { access_token: valid },
      }),
      (error: unknown) =>
        error instanceof TokenError && error.description === 'malformed Bearer authorization header',
    );
  });
});
