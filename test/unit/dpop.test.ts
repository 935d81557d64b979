import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { InvalidAccessTokenError } from '../../src/core/tokens/access-token-validation.js';
import {
  DPOP_NONCE_SLOT_SECONDS,
  DpopProofError,
  dpopReplayNamespace,
  type DpopProofRequest,
} from '../../src/core/tokens/dpop.js';
import { ACCESS_TOKEN_TYPE } from '../../src/core/token-endpoint/token-exchange.js';
import { DEVICE_CODE_GRANT_TYPE, TOKEN_EXCHANGE_GRANT, type Client } from '../../src/core/model.js';
import { checkTokenPresentation } from '../../src/core/tokens/token-presentation.js';
import type { TokenResponse } from '../../src/core/tokens/token-issuer.js';
import { ManualClock } from '../../src/shared/clock.js';
import { sha256 } from '../../src/shared/crypto.js';
import { ath, makeProof, proofKey, unsignedProof, type ProofKey } from '../helpers/dpop-proofs.js';
import {
  addClient,
  addUser,
  basic,
  expectOAuthError,
  pkcePair,
  REDIRECT,
  seedCode,
  wireAnswer,
} from '../helpers/fakes/fixtures.js';
import { ISSUER, testEngine, type TestEngine } from '../helpers/fakes/test-engine.js';

// RFC 9449 through the engine's public entry points (DpopVerifier.verify, TokenEndpoint.handle,
// checkTokenPresentation, UserInfoService.claims, AuthorizationService) on the in-memory fakes and a
// manual clock.

const TOKEN_URL = `${ISSUER}/token`;
const ME_URL = `${ISSUER}/v1/users/me`;

interface Keys {
  es256: ProofKey;
  other: ProofKey;
  rs256: ProofKey;
  ps256: ProofKey;
  eddsa: ProofKey;
  es384: ProofKey;
}

let keys!: Keys;
before(async () => {
  keys = {
    es256: await proofKey('ES256'),
    other: await proofKey('ES256'),
    rs256: await proofKey('RS256'),
    ps256: await proofKey('PS256'),
    eddsa: await proofKey('EdDSA'),
    es384: await proofKey('ES384'),
  };
});

async function expectProofError(
  promise: Promise<unknown>,
  code: DpopProofError['code'],
  description: RegExp,
): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof DpopProofError, String(error));
    assert.equal(error.code, code, error.description);
    assert.match(error.description, description);
    return true;
  });
}

interface ProofRow {
  name: string;
  /** The request's DPoP header values, made at `now`. */
  proofs: (now: number) => Promise<string[]>;
  /** What the request is: the token endpoint by default. */
  request?: Omit<DpopProofRequest, 'proofs'>;
  /** The thumbprint expected, or the refusal. */
  expected: { jkt: keyof Keys } | { code: DpopProofError['code']; description: RegExp };
}

const at = (key: () => ProofKey, options: Partial<Parameters<typeof makeProof>[1]> = {}) => {
  return async (now: number) => [await makeProof(key(), { htu: TOKEN_URL, iat: now, ...options })];
};
const invalid = (description: RegExp) => ({ code: 'invalid_dpop_proof' as const, description });

const PROOF_ROWS: ProofRow[] = [
  { name: 'an ES256 proof for the token endpoint', proofs: at(() => keys.es256), expected: { jkt: 'es256' } },
  { name: 'RS256', proofs: at(() => keys.rs256), expected: { jkt: 'rs256' } },
  { name: 'PS256', proofs: at(() => keys.ps256), expected: { jkt: 'ps256' } },
  { name: 'EdDSA (Ed25519)', proofs: at(() => keys.eddsa), expected: { jkt: 'eddsa' } },
  {
    name: 'htu compared normalised: case of scheme and host, the default port (RFC 3986 §6.2)',
    proofs: at(() => keys.es256, { htu: 'HTTPS://Gatehouse.TEST:443/token' }),
    expected: { jkt: 'es256' },
  },
  {
    name: 'htu query and fragment ignored (§4.3 item 9)',
    proofs: at(() => keys.es256, { htu: `${TOKEN_URL}?a=b#c` }),
    expected: { jkt: 'es256' },
  },
  {
    name: 'typ compared as a media type (RFC 7515 §4.1.9)',
    proofs: at(() => keys.es256, { header: { typ: 'application/DPoP+JWT' } }),
    expected: { jkt: 'es256' },
  },
  // Item 1: exactly one header.
  {
    name: 'two DPoP headers',
    proofs: async (now) => [...(await at(() => keys.es256)(now)), ...(await at(() => keys.es256)(now))],
    expected: invalid(/exactly one DPoP header/),
  },
  // Items 2-7: the JWT, its header, its signature.
  { name: 'not a JWT', proofs: async () => ['not-a-jwt'], expected: invalid(/compact JWT/) },
  {
    name: 'typ jwt',
    proofs: at(() => keys.es256, { header: { typ: 'JWT' } }),
    expected: invalid(/typ must be dpop\+jwt/),
  },
  {
    name: 'typ missing',
    proofs: at(() => keys.es256, { header: { typ: undefined } }),
    expected: invalid(/typ must be dpop\+jwt/),
  },
  {
    name: 'alg none',
    proofs: async (now) => [unsignedProof(keys.es256, { htu: TOKEN_URL, iat: now })],
    expected: invalid(/signed with one of/),
  },
  {
    name: 'alg ES384, not on the list',
    proofs: at(() => keys.es384),
    expected: invalid(/signed with one of ES256, PS256, RS256, EdDSA, Ed25519/),
  },
  {
    name: 'jwk missing',
    proofs: at(() => keys.es256, { header: { jwk: undefined } }),
    expected: invalid(/public key in the jwk header/),
  },
  {
    name: 'jwk a private key',
    proofs: async (now) => {
      const { exportJWK } = await import('jose');
      const privateJwk = await exportJWK(keys.es256.privateKey);
      return [await makeProof(keys.es256, { htu: TOKEN_URL, iat: now, header: { jwk: privateJwk } })];
    },
    expected: invalid(/must be a public key/),
  },
  {
    name: 'jwk a symmetric key',
    proofs: at(() => keys.es256, { header: { jwk: { kty: 'oct', k: 'c2VjcmV0' } } }),
    expected: invalid(/must be a public key/),
  },
  {
    name: 'signed by another key than its jwk',
    proofs: async (now) => at(() => keys.es256, { header: { jwk: keys.other.publicJwk } })(now),
    expected: invalid(/signature does not verify/),
  },
  // Items 3, 8-11: the claims.
  ...(['jti', 'htm', 'htu', 'iat'] as const).map((claim) => ({
    name: `${claim} missing`,
    proofs: at(() => keys.es256, { claims: { [claim]: undefined } }),
    expected: invalid(new RegExp(`${claim} claim is missing`)),
  })),
  {
    name: 'jti longer than 255 characters',
    proofs: at(() => keys.es256, { jti: 'j'.repeat(256) }),
    expected: invalid(/jti of 1 to 255/),
  },
  {
    name: 'htm GET at a POST endpoint',
    proofs: at(() => keys.es256, { htm: 'GET' }),
    expected: invalid(/htm must be POST/),
  },
  {
    name: 'htm in lower case (RFC 9110 §9.1: methods are case-sensitive)',
    proofs: at(() => keys.es256, { htm: 'post' }),
    expected: invalid(/htm must be POST/),
  },
  {
    name: 'htu of another endpoint',
    proofs: at(() => keys.es256, { htu: `${ISSUER}/par` }),
    expected: invalid(/htu must be https:\/\/gatehouse\.test\/token/),
  },
  {
    name: 'htu of another host',
    proofs: at(() => keys.es256, { htu: 'https://evil.example/token' }),
    expected: invalid(/htu must be/),
  },
  {
    name: 'htu not a URL',
    proofs: at(() => keys.es256, { htu: '/token' }),
    expected: invalid(/htu must be/),
  },
  {
    name: 'iat 66 s ago: outside 60 s and 5 s of leeway',
    proofs: async (now) => at(() => keys.es256, { iat: now - 66 })(now),
    expected: invalid(/not made just now/),
  },
  {
    name: 'iat 66 s ahead',
    proofs: async (now) => at(() => keys.es256, { iat: now + 66 })(now),
    expected: invalid(/not made just now/),
  },
  {
    name: 'iat 65 s ago: inside the window',
    proofs: async (now) => at(() => keys.es256, { iat: now - 65 })(now),
    expected: { jkt: 'es256' },
  },
  {
    name: 'iat not a number',
    proofs: at(() => keys.es256, { claims: { iat: 'now' } }),
    expected: invalid(/iat claim is missing or malformed/),
  },
  // Item 12: a resource request.
  {
    name: 'resource request: ath and the bound key match',
    proofs: at(() => keys.es256, { htm: 'GET', htu: ME_URL, accessToken: 'the-token' }),
    request: { method: 'GET', url: ME_URL, accessToken: { token: 'the-token', jkt: 'set below' } },
    expected: { jkt: 'es256' },
  },
  {
    name: 'resource request: ath of another token',
    proofs: at(() => keys.es256, { htm: 'GET', htu: ME_URL, accessToken: 'another-token' }),
    request: { method: 'GET', url: ME_URL, accessToken: { token: 'the-token', jkt: 'set below' } },
    expected: invalid(/ath is not the hash of the access token/),
  },
  {
    name: 'resource request: ath missing',
    proofs: at(() => keys.es256, { htm: 'GET', htu: ME_URL }),
    request: { method: 'GET', url: ME_URL, accessToken: { token: 'the-token', jkt: 'set below' } },
    expected: invalid(/ath is not the hash/),
  },
  {
    name: 'resource request: a proof by another key than the token is bound to',
    proofs: at(() => keys.other, { htm: 'GET', htu: ME_URL, accessToken: 'the-token' }),
    request: { method: 'GET', url: ME_URL, accessToken: { token: 'the-token', jkt: 'set below' } },
    expected: invalid(/not made with the key the access token is bound to/),
  },
];

describe('RFC 9449 §4.3: a DPoP proof, check by check', () => {
  let engine: TestEngine;
  before(async () => {
    engine = await testEngine();
  });
  after(() => engine.close());

  for (const row of PROOF_ROWS) {
    it(row.name, async () => {
      const now = engine.clock.now();
      const proofs = await row.proofs(now);
      const base = row.request ?? { method: 'POST', url: TOKEN_URL };
      const request: DpopProofRequest = {
        ...base,
        proofs,
        // The token under test is bound to the ES256 key.
        ...(base.accessToken === undefined
          ? {}
          : { accessToken: { token: base.accessToken.token, jkt: keys.es256.jkt } }),
      };
      const verify = engine.engine.dpop.verify(request);
      if ('jkt' in row.expected) {
        assert.deepEqual(await verify, { jkt: keys[row.expected.jkt].jkt });
      } else {
        await expectProofError(verify, row.expected.code, row.expected.description);
      }
    });
  }

  it('a proof is accepted once; its jti under another key is another proof (§11.1)', async () => {
    const now = engine.clock.now();
    const jti = randomUUID();
    const proof = await makeProof(keys.es256, { htu: TOKEN_URL, iat: now, jti });
    const request = { method: 'POST', url: TOKEN_URL, proofs: [proof] };
    assert.equal((await engine.engine.dpop.verify(request)).jkt, keys.es256.jkt);
    await expectProofError(engine.engine.dpop.verify(request), 'invalid_dpop_proof', /used before/);
    const sameJti = await makeProof(keys.other, { htu: TOKEN_URL, iat: now, jti });
    assert.equal((await engine.engine.dpop.verify({ ...request, proofs: [sameJti] })).jkt, keys.other.jkt);
    // Kept in the store as long as the proof could be accepted: iat + 60 + 5.
    assert.equal(
      await engine.storage.usedJtis.use(dpopReplayNamespace(keys.es256.jkt), jti, now + 65, now + 64),
      false,
      'still held a second before the window closes',
    );
    assert.equal(
      await engine.storage.usedJtis.use(dpopReplayNamespace(keys.es256.jkt), jti, now + 65, now + 65),
      true,
      'the row expired at iat + 65, when the window has closed',
    );
  });

  it('a proof refused for another reason spends nothing: the same jti is accepted once corrected', async () => {
    const now = engine.clock.now();
    const jti = randomUUID();
    const wrong = await makeProof(keys.es256, { htu: `${ISSUER}/par`, iat: now, jti });
    await expectProofError(
      engine.engine.dpop.verify({ method: 'POST', url: TOKEN_URL, proofs: [wrong] }),
      'invalid_dpop_proof',
      /htu/,
    );
    const right = await makeProof(keys.es256, { htu: TOKEN_URL, iat: now, jti });
    assert.ok(await engine.engine.dpop.verify({ method: 'POST', url: TOKEN_URL, proofs: [right] }));
  });

  it('nonces are off by default: none is handed out, and one sent is not looked at', async () => {
    assert.equal(engine.engine.dpop.nonce(), undefined);
    const proof = await makeProof(keys.es256, { htu: TOKEN_URL, iat: engine.clock.now(), nonce: 'made-up' });
    assert.ok(await engine.engine.dpop.verify({ method: 'POST', url: TOKEN_URL, proofs: [proof] }));
  });
});

describe('RFC 9449 §8, §9: nonces, when required', () => {
  let engine: TestEngine;
  let other: TestEngine;
  before(async () => {
    engine = await testEngine({ dpopNonce: 'required' });
    // Another process: its own engine over the same secret, with its own clock at the same time.
    other = await testEngine({ dpopNonce: 'required', storage: engine.storage });
  });
  after(async () => {
    await engine.close();
    await other.close();
  });

  const verify = async (nonce: string | undefined, e = engine) =>
    e.engine.dpop.verify({
      method: 'POST',
      url: TOKEN_URL,
      proofs: [
        await makeProof(keys.es256, {
          htu: TOKEN_URL,
          iat: e.clock.now(),
          ...(nonce === undefined ? {} : { nonce }),
        }),
      ],
    });

  it('a proof without a nonce, or with one not issued here, is use_dpop_nonce', async () => {
    await expectProofError(verify(undefined), 'use_dpop_nonce', /must carry the nonce/);
    await expectProofError(verify('AAAAAAAAAAAAAAAAAAAAAA'), 'use_dpop_nonce', /expired/);
  });

  it('the current nonce is accepted, by every process sharing the secret, without shared memory', async () => {
    const nonce = engine.engine.dpop.nonce();
    assert.match(nonce ?? '', /^[A-Za-z0-9_-]{22}$/);
    assert.equal(other.engine.dpop.nonce(), nonce);
    assert.ok(await verify(nonce));
    assert.ok(await verify(nonce, other));
  });

  it('it rotates every slot; the previous slot’s nonce is still accepted, an older one is not', async () => {
    const first = engine.engine.dpop.nonce();
    engine.clock.advance(DPOP_NONCE_SLOT_SECONDS);
    const second = engine.engine.dpop.nonce();
    assert.notEqual(second, first);
    assert.ok(await verify(first), 'the previous slot');
    engine.clock.advance(DPOP_NONCE_SLOT_SECONDS);
    await expectProofError(verify(first), 'use_dpop_nonce', /expired/);
    assert.ok(await verify(second));
  });

  it('a nonce from a server with another secret is refused', async () => {
    const foreign = await testEngine({
      dpopNonce: 'required',
      secret: Buffer.alloc(32, 9),
      clock: new ManualClock(engine.clock.now()),
    });
    try {
      await expectProofError(verify(foreign.engine.dpop.nonce()), 'use_dpop_nonce', /expired/);
    } finally {
      await foreign.close();
    }
  });

  it('the token endpoint answers use_dpop_nonce 400 with the nonce in DPoP-Nonce; the retry succeeds', async () => {
    const { client, secret } = await addClient(engine, { grantTypes: ['client_credentials'] });
    const request = async (nonce?: string) =>
      engine.token({
        authorization: basic(client.id, secret),
        params: { grant_type: 'client_credentials' },
        dpopProofs: [
          await makeProof(keys.es256, {
            htu: TOKEN_URL,
            iat: engine.clock.now(),
            ...(nonce === undefined ? {} : { nonce }),
          }),
        ],
      });
    const error = await expectOAuthError(request(), { code: 'use_dpop_nonce', status: 400 });
    const answer = wireAnswer(error);
    assert.equal(answer.status, 400);
    assert.equal(answer.headers['dpop-nonce'], engine.engine.dpop.nonce());
    assert.deepEqual(answer.body, { error: 'use_dpop_nonce', error_description: error.description });
    const response = await request(answer.headers['dpop-nonce']);
    assert.equal(response.token_type, 'DPoP');
  });
});

/** A DPoP token request: the proof made for the token endpoint with `key` at the engine's time. */
async function withProof(engine: TestEngine, key: ProofKey | undefined) {
  if (key === undefined) return {};
  return { dpopProofs: [await makeProof(key, { htu: TOKEN_URL, iat: engine.clock.now() })] };
}

describe('RFC 9449 §5, §6, §10 at the token endpoint', () => {
  let engine: TestEngine;
  before(async () => {
    engine = await testEngine();
  });
  after(() => engine.close());

  async function clientCredentials(client: Client, secret: string, key?: ProofKey): Promise<TokenResponse> {
    return engine.token({
      authorization: basic(client.id, secret),
      params: { grant_type: 'client_credentials', scope: 'read' },
      ...(await withProof(engine, key)),
    });
  }

  it('a valid proof: token_type DPoP and cnf.jkt; introspection reports both (§6.1, §6.2)', async () => {
    const { client, secret } = await addClient(engine, { grantTypes: ['client_credentials'] });
    const response = await clientCredentials(client, secret, keys.es256);
    assert.equal(response.token_type, 'DPoP');
    assert.deepEqual(decodeJwt(response.access_token).cnf, { jkt: keys.es256.jkt });
    const introspection = await engine.tokens.introspector.introspect(
      response.access_token,
      undefined,
      client,
    );
    assert.equal(introspection.active, true);
    assert.equal(introspection.token_type, 'DPoP');
    assert.deepEqual(introspection.cnf, { jkt: keys.es256.jkt });
    const plain = await clientCredentials(client, secret);
    assert.equal(plain.token_type, 'bearer');
    assert.equal(decodeJwt(plain.access_token).cnf, undefined);
  });

  it('an invalid proof is 400 invalid_dpop_proof, and issues nothing', async () => {
    const { client, secret } = await addClient(engine, { grantTypes: ['client_credentials'] });
    const proof = await makeProof(keys.es256, { htu: TOKEN_URL, iat: engine.clock.now(), htm: 'GET' });
    await expectOAuthError(
      engine.token({
        authorization: basic(client.id, secret),
        params: { grant_type: 'client_credentials' },
        dpopProofs: [proof],
      }),
      { code: 'invalid_dpop_proof', status: 400, description: /htm must be POST/ },
    );
  });

  it('dpop_bound_access_tokens (§5.2): a request without a proof is refused', async () => {
    const { client, secret } = await addClient(engine, {
      grantTypes: ['client_credentials'],
      dpopBoundAccessTokens: true,
    });
    await expectOAuthError(clientCredentials(client, secret), {
      code: 'invalid_dpop_proof',
      status: 400,
      description: /must send a DPoP proof/,
    });
    assert.equal((await clientCredentials(client, secret, keys.es256)).token_type, 'DPoP');
  });

  it('a MAC client’s request with a proof is invalid_request: one token is never both', async () => {
    const { client, secret } = await addClient(engine, {
      grantTypes: ['client_credentials'],
      tokenType: 'mac',
    });
    await expectOAuthError(clientCredentials(client, secret, keys.es256), {
      code: 'invalid_request',
      status: 400,
      description: /MAC tokens/,
    });
  });

  describe('refresh tokens (§5)', () => {
    async function codeTokens(isPublic: boolean, key: ProofKey | undefined) {
      const party = await addClient(engine, { isPublic });
      const user = await addUser(engine);
      const pkce = pkcePair();
      const { code } = await seedCode(engine, party.client, user, {
        codeChallenge: pkce.challenge,
        codeChallengeMethod: 'S256',
      });
      const params = {
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT,
        code_verifier: pkce.verifier,
      };
      const response = await engine.token({
        ...(isPublic
          ? { authorization: undefined, params: { ...params, client_id: party.client.id } }
          : { authorization: basic(party.client.id, party.secret), params }),
        ...(await withProof(engine, key)),
      });
      return { ...party, response };
    }
    const refresh = async (
      party: { client: Client; secret: string },
      token: string,
      key: ProofKey | undefined,
    ) =>
      engine.token({
        ...(party.client.isPublic
          ? {
              authorization: undefined,
              params: { grant_type: 'refresh_token', refresh_token: token, client_id: party.client.id },
            }
          : {
              authorization: basic(party.client.id, party.secret),
              params: { grant_type: 'refresh_token', refresh_token: token },
            }),
        ...(await withProof(engine, key)),
      });
    const storedJkt = async (token: string | undefined) =>
      (await engine.storage.refreshTokens.get(sha256(token ?? '')))?.dpopJkt;

    it('a public client’s refresh token is bound to the key, and rotation keeps the binding', async () => {
      const party = await codeTokens(true, keys.es256);
      assert.equal(party.response.token_type, 'DPoP');
      assert.equal(await storedJkt(party.response.refresh_token), keys.es256.jkt);
      const token = party.response.refresh_token ?? '';
      await expectOAuthError(refresh(party, token, undefined), {
        code: 'invalid_grant',
        status: 400,
        description: /bound to a DPoP key/,
      });
      await expectOAuthError(refresh(party, token, keys.other), {
        code: 'invalid_grant',
        status: 400,
        description: /not made with the key this refresh token is bound to/,
      });
      // The refused attempts changed nothing: the token still refreshes, with its key.
      const rotated = await refresh(party, token, keys.es256);
      assert.equal(rotated.token_type, 'DPoP');
      assert.deepEqual(decodeJwt(rotated.access_token).cnf, { jkt: keys.es256.jkt });
      assert.equal(await storedJkt(rotated.refresh_token), keys.es256.jkt, 'copied on rotation');
    });

    it('a confidential client’s is not bound; each refresh binds its access token to that proof', async () => {
      const party = await codeTokens(false, keys.es256);
      assert.equal(await storedJkt(party.response.refresh_token), null);
      const rebound = await refresh(party, party.response.refresh_token ?? '', keys.other);
      assert.deepEqual(decodeJwt(rebound.access_token).cnf, { jkt: keys.other.jkt });
      const bearer = await refresh(party, rebound.refresh_token ?? '', undefined);
      assert.equal(bearer.token_type, 'bearer');
    });

    it('a public client without a proof gets an unbound refresh token, as before', async () => {
      const party = await codeTokens(true, undefined);
      assert.equal(party.response.token_type, 'bearer');
      assert.equal(await storedJkt(party.response.refresh_token), null);
    });
  });

  describe('dpop_jkt (§10)', () => {
    async function boundCode() {
      const party = await addClient(engine);
      const user = await addUser(engine);
      const { code } = await seedCode(engine, party.client, user, { dpopJkt: keys.es256.jkt });
      const redeem = async (key: ProofKey | undefined) =>
        engine.token({
          authorization: basic(party.client.id, party.secret),
          params: { grant_type: 'authorization_code', code, redirect_uri: REDIRECT },
          ...(await withProof(engine, key)),
        });
      return { code, redeem };
    }
    const consumed = async (code: string) =>
      (await engine.storage.codes.get(sha256(code)))?.consumedAt !== null;

    it('a code bound to a key is redeemed only with a proof of it; a refusal leaves it unused', async () => {
      const { code, redeem } = await boundCode();
      await expectOAuthError(redeem(undefined), {
        code: 'invalid_grant',
        status: 400,
        description: /bound to a DPoP key \(dpop_jkt\)/,
      });
      await expectOAuthError(redeem(keys.other), {
        code: 'invalid_grant',
        status: 400,
        description: /key the authorization request named/,
      });
      assert.equal(await consumed(code), false);
      const response = await redeem(keys.es256);
      assert.deepEqual(decodeJwt(response.access_token).cnf, { jkt: keys.es256.jkt });
    });
  });
});

describe('RFC 9449 §7: a token is accepted only as what it is', () => {
  let engine: TestEngine;
  let dpopToken: string;
  let bearerToken: string;
  before(async () => {
    engine = await testEngine();
    const party = await addClient(engine, { grantTypes: ['client_credentials'] });
    const issue = async (key?: ProofKey) =>
      (
        await engine.token({
          authorization: basic(party.client.id, party.secret),
          params: { grant_type: 'client_credentials' },
          ...(await withProof(engine, key)),
        })
      ).access_token;
    dpopToken = await issue(keys.es256);
    bearerToken = await issue();
  });
  after(() => engine.close());

  const check = async (token: string, presentation: Parameters<typeof checkTokenPresentation>[2]) =>
    checkTokenPresentation(
      token,
      await engine.tokens.validator.validate(token),
      presentation,
      engine.engine.dpop,
    );
  const dpopPresentation = async (token: string, key: ProofKey, extra: { accessToken?: string } = {}) => ({
    scheme: 'dpop' as const,
    method: 'GET',
    url: ME_URL,
    proofs: [
      await makeProof(key, {
        htm: 'GET',
        htu: ME_URL,
        iat: engine.clock.now(),
        accessToken: extra.accessToken ?? token,
      }),
    ],
  });

  it('a bound token with its proof is accepted', async () => {
    await check(dpopToken, await dpopPresentation(dpopToken, keys.es256));
  });

  it('a bound token presented as Bearer is invalid_token', async () => {
    await assert.rejects(check(dpopToken, { scheme: 'bearer' }), (error: unknown) => {
      assert.ok(error instanceof InvalidAccessTokenError);
      assert.match(error.description, /must be presented with the DPoP scheme/);
      return true;
    });
  });

  it('an unbound token under the DPoP scheme is invalid_token', async () => {
    await assert.rejects(check(bearerToken, await dpopPresentation(bearerToken, keys.es256)), (error) => {
      assert.ok(error instanceof InvalidAccessTokenError);
      assert.match(error.description, /not DPoP-bound/);
      return true;
    });
  });

  it('a proof by another key, or for another token (ath), is invalid_dpop_proof', async () => {
    await expectProofError(
      check(dpopToken, await dpopPresentation(dpopToken, keys.other)),
      'invalid_dpop_proof',
      /not made with the key/,
    );
    await expectProofError(
      check(dpopToken, await dpopPresentation(dpopToken, keys.es256, { accessToken: bearerToken })),
      'invalid_dpop_proof',
      /ath/,
    );
  });

  it('UserInfo applies the same rule', async () => {
    const party = await addClient(engine);
    const user = await addUser(engine);
    const { code } = await seedCode(engine, party.client, user, { scope: ['openid'] });
    await engine.storage.clients.update({ ...party.client, scopes: ['openid'] }, 'keep');
    const response = await engine.token({
      authorization: basic(party.client.id, party.secret),
      params: { grant_type: 'authorization_code', code, redirect_uri: REDIRECT },
      ...(await withProof(engine, keys.es256)),
    });
    const token = response.access_token;
    await assert.rejects(engine.userInfo.claims(token), /DPoP scheme/);
    const claims = await engine.userInfo.claims(token, await dpopPresentation(token, keys.es256));
    assert.equal(claims.sub, user.id);
    assert.equal(ath(token), sha256(token), 'ath is the base64url SHA-256 of the token');
  });
});

describe('RFC 9449 §10, §10.1 at the authorization endpoint and /par', () => {
  let engine: TestEngine;
  before(async () => {
    engine = await testEngine();
  });
  after(() => engine.close());
  const { challenge } = pkcePair();
  const query = (client: Client, extra: Record<string, string>) =>
    new URLSearchParams({
      client_id: client.id,
      response_type: 'code',
      redirect_uri: REDIRECT,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      ...extra,
    }).toString();

  it('dpop_jkt is kept with the request; a malformed one is invalid_request', async () => {
    const { client } = await addClient(engine);
    const valid = await engine.validateAuthorization(query(client, { dpop_jkt: keys.es256.jkt }));
    assert.equal(valid.outcome, 'valid');
    assert.equal(valid.outcome === 'valid' ? valid.request.dpopJkt : undefined, keys.es256.jkt);
    const malformed = await engine.validateAuthorization(query(client, { dpop_jkt: 'not-a-thumbprint' }));
    assert.equal(malformed.outcome, 'error-redirect');
    assert.equal(malformed.outcome === 'error-redirect' ? malformed.error : undefined, 'invalid_request');
  });

  it('a dpop_bound_access_tokens client gets no token from /authorize (response_type token)', async () => {
    const { client } = await addClient(engine, {
      grantTypes: ['authorization_code', 'implicit'],
      dpopBoundAccessTokens: true,
    });
    const refused = await engine.validateAuthorization(query(client, { response_type: 'token' }));
    assert.equal(refused.outcome, 'error-redirect');
  });

  it('a proof at /par becomes the request’s dpop_jkt; a different dpop_jkt is invalid_dpop_proof', async () => {
    const { client } = await addClient(engine);
    const parProof = async () => [
      await makeProof(keys.es256, { htu: `${ISSUER}/par`, iat: engine.clock.now() }),
    ];
    const body = query(client, {});
    const pushed = await engine.authorization.push(client, body, await parProof());
    const opened = await engine.validateAuthorization(
      new URLSearchParams({ client_id: client.id, request_uri: pushed.request_uri }).toString(),
    );
    assert.equal(opened.outcome === 'valid' ? opened.request.dpopJkt : undefined, keys.es256.jkt);
    await expectOAuthError(
      engine.authorization.push(client, query(client, { dpop_jkt: keys.other.jkt }), await parProof()),
      { code: 'invalid_dpop_proof', status: 400, description: /dpop_jkt is not the thumbprint/ },
    );
    // A proof for the token endpoint is not one for /par.
    await expectOAuthError(
      engine.authorization.push(client, body, [
        await makeProof(keys.es256, { htu: TOKEN_URL, iat: engine.clock.now() }),
      ]),
      { code: 'invalid_dpop_proof', status: 400, description: /htu/ },
    );
  });
});

describe('RFC 9449 with RFC 8693: a DPoP-bound token is exchanged only by its key’s holder', () => {
  let engine: TestEngine;
  let service: { client: Client; secret: string };
  let boundSubject: string;
  let bearerSubject: string;
  before(async () => {
    engine = await testEngine();
    const user = await addUser(engine);
    const app = await addClient(engine, { scopes: ['read'] });
    service = await addClient(engine, {
      grantTypes: [TOKEN_EXCHANGE_GRANT],
      redirectUris: [],
      scopes: ['read'],
    });
    const { code } = await seedCode(engine, app.client, user, { scope: ['read'] });
    const bound = await engine.token({
      authorization: basic(app.client.id, app.secret),
      params: { grant_type: 'authorization_code', code, redirect_uri: REDIRECT },
      ...(await withProof(engine, keys.es256)),
    });
    boundSubject = bound.access_token;
    const { code: other } = await seedCode(engine, app.client, user, { scope: ['read'] });
    bearerSubject = (
      await engine.token({
        authorization: basic(app.client.id, app.secret),
        params: { grant_type: 'authorization_code', code: other, redirect_uri: REDIRECT },
      })
    ).access_token;
  });
  after(() => engine.close());

  const exchange = async (subjectToken: string, key: ProofKey | undefined) =>
    engine.token({
      authorization: basic(service.client.id, service.secret),
      params: {
        grant_type: TOKEN_EXCHANGE_GRANT,
        subject_token: subjectToken,
        subject_token_type: ACCESS_TOKEN_TYPE,
      },
      ...(await withProof(engine, key)),
    });

  it('without a proof, or with another key’s, the bound subject token is refused', async () => {
    for (const key of [undefined, keys.other]) {
      await expectOAuthError(exchange(boundSubject, key), {
        code: 'invalid_request',
        status: 400,
        description:
          /subject_token: a DPoP-bound token is exchanged only with a DPoP proof made with its key/,
      });
    }
  });

  it('with a proof of its key, the exchanged token is bound to that key too', async () => {
    const response = await exchange(boundSubject, keys.es256);
    assert.equal(response.token_type, 'DPoP');
    assert.deepEqual(decodeJwt(response.access_token).cnf, { jkt: keys.es256.jkt });
  });

  it('a bearer subject token exchanged with a proof gives a token bound to the proof’s key', async () => {
    const response = await exchange(bearerSubject, keys.other);
    assert.deepEqual(decodeJwt(response.access_token).cnf, { jkt: keys.other.jkt });
    assert.equal((await exchange(bearerSubject, undefined)).token_type, 'bearer');
  });
});

describe('RFC 9449 with RFC 8628: the device grant binds its tokens to the polling proof', () => {
  it('a public device client’s access and refresh tokens are bound to the key of its proof', async () => {
    const engine = await testEngine();
    try {
      const { client } = await addClient(engine, {
        isPublic: true,
        redirectUris: [],
        grantTypes: [DEVICE_CODE_GRANT_TYPE, 'refresh_token'],
        scopes: ['read'],
      });
      const user = await addUser(engine);
      const started = await engine.engine.deviceAuthorization.start(client, { scope: 'read', resources: [] });
      const session = { userId: user.id, authTime: engine.clock.now(), sid: 'sid-1' };
      const found = await engine.engine.deviceAuthorization.find(started.user_code);
      assert.equal(found.outcome, 'pending');
      assert.equal(
        await engine.engine.deviceAuthorization.approve(started.user_code, session, {
          scope: ['read'],
          lifetime: 3600,
        }),
        'approved',
      );
      const response = await engine.token({
        authorization: undefined,
        params: {
          grant_type: DEVICE_CODE_GRANT_TYPE,
          client_id: client.id,
          device_code: started.device_code,
        },
        ...(await withProof(engine, keys.es256)),
      });
      assert.equal(response.token_type, 'DPoP');
      assert.deepEqual(decodeJwt(response.access_token).cnf, { jkt: keys.es256.jkt });
      const stored = await engine.storage.refreshTokens.get(sha256(response.refresh_token ?? ''));
      assert.equal(stored?.dpopJkt, keys.es256.jkt);
    } finally {
      await engine.close();
    }
  });
});
