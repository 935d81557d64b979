import assert from 'node:assert/strict';
import { createHmac, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { before, describe, it } from 'node:test';
import fc from 'fast-check';
import {
  calculateJwkThumbprint,
  createLocalJWKSet,
  errors,
  jwtVerify,
  type JSONWebKeySet,
  type JWK,
  type JWTVerifyGetKey,
} from 'jose';
import { KeyRing, type SigningAlgorithm } from '../../src/core/keys/key-ring.js';
import type { SigningKeyRecord } from '../../src/core/model.js';
import {
  b64,
  pairs,
  rawPayloadMutations,
  signWith,
  TOKEN_MUTATIONS,
  type Claims,
  type Header,
  type KeyPair,
} from '../helpers/jws-mutations.js';
import { KeySet } from '#resource-server-internals/jwks-cache.js';
import { SUPPORTED_ALGORITHMS } from '#resource-server-internals/jws-algorithms.js';
import { JwtVerifier, type JwtVerification } from '#resource-server-internals/jwt-verifier.js';

/**
 * The lean verifier (synchronous node:crypto) against the jose call it replaced: for generated tokens,
 * valid ones and mutations of every kind, it accepts exactly when jose's jwtVerify with the same options
 * (and the library's claim-type checks after it) accepts, except where it is documented to be stricter:
 * a part that is not canonical base64url, or a `crit` or `b64` header. Accepted claims are equal.
 */

const RUNS = Number(process.env.GATEHOUSE_FUZZ_RUNS ?? 600);
const ISSUER = 'https://gatehouse.test';
const OTHER_AUDIENCE = 'https://api.example';
const NOW = 1_800_000_000;
const REQUIRED_CLAIMS = ['iss', 'exp', 'aud', 'sub', 'client_id', 'iat', 'jti'];

// ---- keys

interface TestKey {
  name: string;
  /** The algorithm the key signs with when a recipe does not say otherwise. */
  alg: string;
  privateKey: KeyObject;
  jwk: JWK;
}

/** A key published as Gatehouse publishes its own (thumbprint kid, alg, use sig), with overrides. */
async function makeKey(
  name: string,
  alg: string,
  pair: KeyPair,
  overrides: Partial<JWK> = {},
): Promise<TestKey> {
  const jwk = pair.publicKey.export({ format: 'jwk' }) as JWK;
  const kid = await calculateJwkThumbprint(jwk);
  // Through JSON, as a JWKS arrives: an override of undefined removes the member.
  const published = JSON.parse(JSON.stringify({ ...jwk, kid, alg, use: 'sig', ...overrides })) as JWK;
  return { name, alg, privateKey: pair.privateKey, jwk: published };
}

/** Gatehouse's own KeyRing over an in-memory store: real signJwt, real published JWK. */
async function makeKeyRing(alg: SigningAlgorithm): Promise<{ ring: KeyRing; jwk: JWK }> {
  const records: SigningKeyRecord[] = [];
  const ring = new KeyRing({
    store: {
      insert: async (record) => void records.unshift(record),
      list: async () => [...records],
      retireAllExcept: async () => undefined,
      revoke: async () => false,
    },
    keyEncryptionKey: Buffer.alloc(32, 9),
    clock: { now: () => NOW },
    algorithm: alg,
    retiredKeyRetentionSeconds: 3600,
    refreshIntervalSeconds: 3600,
  });
  await ring.init();
  // The ring also holds the ID tokens' keys (RS256, ES256); signJwt signs with the access-token key.
  const { keys } = await ring.publicJwks();
  return { ring, jwk: keys.find((key) => key.kid === ring.activeKid) as JWK };
}

// ---- token recipes

/** Mutations of the claims object, before it is encoded. */
const CLAIM_MUTATIONS: Record<string, (claims: Claims) => void> = {
  ...Object.fromEntries(
    [...REQUIRED_CLAIMS, 'scope', 'nbf'].map((claim) => [`drop ${claim}`, (c: Claims) => delete c[claim]]),
  ),
  'iss trailing slash': (c) => (c.iss = `${ISSUER}/`),
  'iss in an array': (c) => (c.iss = [ISSUER]),
  'iss upper case': (c) => (c.iss = ISSUER.toUpperCase()),
  'aud wrong': (c) => (c.aud = 'https://elsewhere.test'),
  'aud array with': (c) => (c.aud = ['https://elsewhere.test', ISSUER]),
  'aud array without': (c) => (c.aud = ['https://elsewhere.test']),
  'aud array with non-strings': (c) => (c.aud = [1, null, ISSUER]),
  'aud empty array': (c) => (c.aud = []),
  'aud number': (c) => (c.aud = 7),
  'aud second accepted': (c) => (c.aud = OTHER_AUDIENCE),
  ...Object.fromEntries(
    [-3600, -6, -5, -4, -1, 0, 1].map((d) => [
      `exp now${d >= 0 ? '+' : ''}${d}`,
      (c: Claims) => (c.exp = NOW + d),
    ]),
  ),
  'exp string': (c) => (c.exp = String(NOW + 600)),
  'exp null': (c) => (c.exp = null),
  'exp fraction': (c) => (c.exp = NOW + 0.5),
  ...Object.fromEntries(
    [-1, 0, 1, 4, 5, 6, 3600].map((d) => [
      `nbf now${d >= 0 ? '+' : ''}${d}`,
      (c: Claims) => (c.nbf = NOW + d),
    ]),
  ),
  'nbf string': (c) => (c.nbf = String(NOW)),
  'nbf null': (c) => (c.nbf = null),
  'iat string': (c) => (c.iat = String(NOW)),
  'iat null': (c) => (c.iat = null),
  'iat future': (c) => (c.iat = NOW + 3600),
  'iat fraction': (c) => (c.iat = NOW + 0.25),
  'client_id number': (c) => (c.client_id = 42),
  'client_id null': (c) => (c.client_id = null),
  'client_id object': (c) => (c.client_id = { id: 'x' }),
  'sub number': (c) => (c.sub = 1),
  'sub array': (c) => (c.sub = ['a']),
  'scope number': (c) => (c.scope = 1),
  'scope array': (c) => (c.scope = ['read']),
  'scope null': (c) => (c.scope = null),
  'jti number': (c) => (c.jti = 5),
  'extra claims': (c) => Object.assign(c, { gid: 'g', token_type: 'mac', nested: { a: [1, 2] } }),
};

/** Mutations of the encoded claims: what JSON.stringify cannot produce. */
const RAW_PAYLOAD_MUTATIONS: Record<string, (json: string) => Buffer> = {
  ...rawPayloadMutations('exp', 'iss', 'https://evil.test'),
  'payload string': () => Buffer.from('"claims"'),
};

const HEADER_MUTATIONS: Record<string, (header: Header, keys: readonly TestKey[]) => void> = {
  'typ drop': (h) => delete h.typ,
  ...Object.fromEntries(
    [
      'AT+JWT',
      'application/at+jwt',
      'Application/AT+JWT',
      'jwt',
      'JWT',
      'at+jwt ',
      'application/jwt',
      'foo/at+jwt',
      'at+jwt; x=1',
    ].map((typ) => [`typ ${typ}`, (h: Header) => (h.typ = typ)]),
  ),
  'typ number': (h) => (h.typ = 1),
  ...Object.fromEntries(
    [
      'ES256',
      'ES384',
      'ES512',
      'RS256',
      'RS384',
      'RS512',
      'PS256',
      'EdDSA',
      'Ed25519',
      'none',
      'HS256',
      '',
      'es256',
      'ES256K',
    ].map((alg) => [`alg ${alg || '(empty)'}`, (h: Header) => (h.alg = alg)]),
  ),
  'alg drop': (h) => delete h.alg,
  'alg number': (h) => (h.alg = 256),
  'kid drop': (h) => delete h.kid,
  'kid unknown': (h) => (h.kid = 'no-such-key'),
  'kid of another key': (h, keys) => (h.kid = keys.find((key) => key.jwk.kid !== h.kid)?.jwk.kid),
  'kid null': (h) => (h.kid = null),
  'kid number': (h) => (h.kid = 1),
  'crit exp': (h) => (h.crit = ['exp']),
  'crit empty': (h) => (h.crit = []),
  'crit b64 true': (h) => Object.assign(h, { crit: ['b64'], b64: true }),
  'crit b64 false': (h) => Object.assign(h, { crit: ['b64'], b64: false }),
  'crit null': (h) => (h.crit = null),
  'b64 true': (h) => (h.b64 = true),
  'b64 false': (h) => (h.b64 = false),
  'extra jku': (h) => (h.jku = 'https://evil.test/jwks'),
};

const RAW_HEADER_MUTATIONS: Record<string, (json: string) => Buffer> = {
  'header array': (json) => Buffer.from(`[${json}]`),
  'header not JSON': (json) => Buffer.from(json.slice(1)),
  'header invalid UTF-8': (json) =>
    Buffer.concat([Buffer.from(json.slice(0, -1)), Buffer.from([0x2c, 0x22, 0xc3, 0x22, 0x3a, 0x31, 0x7d])]),
};

/** Mutations of the finished compact serialization. */
const JWT_MUTATIONS: Record<string, (token: string) => string> = {
  ...TOKEN_MUTATIONS,
  'pad the payload': (t) => {
    const [h, p, s] = t.split('.');
    return `${h}.${p}=.${s}`;
  },
  'standard base64 alphabet': (t) => {
    const [h, p, s = ''] = t.split('.');
    return `${h}.${p}.${s.replace(/-/g, '+').replace(/_/g, '/')}`;
  },
  'space in the payload': (t) => {
    const [h, p = '', s] = t.split('.');
    return `${h}.${p.slice(0, 4)} ${p.slice(4)}.${s}`;
  },
  'extra dot': (t) => `${t}.`,
  'leading dot': (t) => `.${t}`,
  'header of another token': (t) =>
    `${b64(JSON.stringify({ alg: 'ES256', typ: 'at+jwt', kid: 'no-such-key' }))}${t.slice(t.indexOf('.'))}`,
};

const SIGNERS = [
  'own key',
  'own key, as the header says',
  'unpublished key',
  'HS256 with the public key',
  'none',
] as const;
type Signer = (typeof SIGNERS)[number];

interface Recipe {
  key: string;
  signer: Signer | 'Gatehouse KeyRing';
  claims: Claims;
  claimMutations: string[];
  rawPayload: string | undefined;
  headerMutations: string[];
  rawHeader: string | undefined;
  tokenMutation: string | undefined;
}

// ---- the two verifiers

interface Config {
  name: string;
  algorithms: string[];
  audiences: string[] | 'any';
  clockToleranceSeconds: number;
  requiredClaims?: string[];
}

const CONFIGS: Config[] = [
  {
    name: 'library defaults',
    algorithms: ['ES256', 'EdDSA', 'RS256'],
    audiences: [ISSUER],
    clockToleranceSeconds: 5,
  },
  {
    name: 'every algorithm, two audiences, no tolerance',
    algorithms: [...SUPPORTED_ALGORITHMS],
    audiences: [ISSUER, OTHER_AUDIENCE],
    clockToleranceSeconds: 0,
  },
  {
    // What the server's own validator passes (src/core/tokens/access-token-validation.ts, decision 26).
    name: "Gatehouse core's: any audience, scope required, no tolerance",
    algorithms: ['ES256', 'EdDSA', 'Ed25519', 'RS256'],
    audiences: 'any',
    clockToleranceSeconds: 0,
    requiredClaims: ['scope'],
  },
];

// One verifier per configuration for the whole run, as a resource server keeps one: what it remembers
// between tokens (the headers it has checked) is under test too.
const verifiers = new Map(CONFIGS.map((config) => [config, new JwtVerifier({ ...config, issuer: ISSUER })]));
const leanVerifier = (config: Config) => verifiers.get(config)!;

type JoseOutcome = { accepted: true; claims: Claims } | { accepted: false; error: unknown };

/** The call ResourceServer made before the lean path, with the claim-type checks it made after. */
async function viaJose(token: string, getKey: JWTVerifyGetKey, config: Config): Promise<JoseOutcome> {
  try {
    const { payload } = await jwtVerify(token, getKey, {
      issuer: ISSUER,
      audience: config.audiences === 'any' ? undefined : config.audiences,
      algorithms: config.algorithms,
      typ: 'at+jwt',
      clockTolerance: config.clockToleranceSeconds,
      currentDate: new Date(NOW * 1000),
      requiredClaims: [...REQUIRED_CLAIMS, ...(config.requiredClaims ?? [])],
    });
    if (typeof payload.client_id !== 'string' || typeof payload.sub !== 'string') {
      return { accepted: false, error: 'malformed claims' };
    }
    if (payload.scope !== undefined && typeof payload.scope !== 'string') {
      return { accepted: false, error: 'malformed claims' };
    }
    const { aud } = payload;
    const audienceShape =
      typeof aud === 'string' || (Array.isArray(aud) && aud.every((value) => typeof value === 'string'));
    if (config.audiences === 'any' && !audienceShape) {
      // Without an expected audience jose checks none; the caller (Gatehouse's validator) checks its shape.
      return { accepted: false, error: 'malformed claims' };
    }
    return { accepted: true, claims: payload as Claims };
  } catch (error) {
    return { accepted: false, error };
  }
}

/**
 * Where the lean verifier is stricter than jose by design, written independently of its code: every
 * part canonical base64url (alphabet, no padding, unused bits zero), and no `crit` or `b64` header.
 */
function withinStrictProfile(token: string): boolean {
  const parts = token.split('.');
  if (parts.length !== 3) return true; // jose refuses these itself
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  for (const part of parts) {
    if (!/^[A-Za-z0-9_-]*$/.test(part) || part.length % 4 === 1) return false;
    const last = alphabet.indexOf(part.at(-1) ?? 'A');
    if (part.length % 4 === 2 && (last & 0b1111) !== 0) return false;
    if (part.length % 4 === 3 && (last & 0b11) !== 0) return false;
  }
  try {
    const header: unknown = JSON.parse(Buffer.from(parts[0] ?? '', 'base64url').toString('utf8'));
    if (typeof header === 'object' && header !== null && ('crit' in header || 'b64' in header)) return false;
  } catch {
    // jose refuses a header that is not JSON
  }
  return true;
}

// ---- the test

describe('lean JWT verifier: differential against jose jwtVerify', () => {
  const keys: TestKey[] = [];
  const unpublished = new Map<string, KeyObject>();
  const rings = new Map<string, KeyRing>();
  const keySets: Array<{ name: string; jwks: JSONWebKeySet; lean: KeySet; jose: JWTVerifyGetKey }> = [];
  const tally = { accepted: 0, refused: 0, stricterThanJose: 0, comparisons: 0 };

  before(async () => {
    const [ec256a, ec256b, ec384, ec521] = [
      pairs.ec('P-256'),
      pairs.ec('P-256'),
      pairs.ec('P-384'),
      pairs.ec('P-521'),
    ];
    keys.push(
      await makeKey('ES256', 'ES256', ec256a),
      await makeKey('ES256 second', 'ES256', ec256b),
      await makeKey('RS256', 'RS256', pairs.rsa(2048)),
      await makeKey('EdDSA', 'EdDSA', pairs.ed25519()),
      await makeKey('ES384', 'ES384', ec384),
      await makeKey('ES512', 'ES512', ec521),
      await makeKey('PS256', 'PS256', pairs.rsa(2048)),
      await makeKey('RSA without alg', 'RS384', pairs.rsa(2048), { alg: undefined }),
      await makeKey('Ed25519 without alg or use', 'Ed25519', pairs.ed25519(), {
        alg: undefined,
        use: undefined,
      }),
      await makeKey('RSA 1024', 'RS256', pairs.rsa(1024)),
      await makeKey('use enc', 'ES256', pairs.ec('P-256'), { use: 'enc' }),
      await makeKey('key_ops verify', 'ES256', pairs.ec('P-256'), { use: undefined, key_ops: ['verify'] }),
      await makeKey('key_ops sign', 'EdDSA', pairs.ed25519(), { key_ops: ['sign'] }),
      await makeKey('ext not boolean', 'ES256', pairs.ec('P-256'), { ext: 'yes' as unknown as boolean }),
      await makeKey('duplicate kid A', 'ES256', pairs.ec('P-256'), { kid: 'duplicate' }),
      await makeKey('duplicate kid B', 'ES256', pairs.ec('P-256'), { kid: 'duplicate' }),
    );
    // A JWK Set member that carries its private part.
    const withPrivate = pairs.ec('P-256');
    const privateJwk = withPrivate.privateKey.export({ format: 'jwk' }) as JWK;
    keys.push({
      name: 'private member',
      alg: 'ES256',
      privateKey: withPrivate.privateKey,
      jwk: { ...privateJwk, kid: 'private-member', alg: 'ES256', use: 'sig' },
    });
    unpublished.set('EC', pairs.ec('P-256').privateKey);
    unpublished.set('RSA', pairs.rsa(2048).privateKey);
    unpublished.set('OKP', pairs.ed25519().privateKey);
    const ringJwks: JWK[] = [];
    for (const alg of ['ES256', 'RS256', 'EdDSA'] as const) {
      const { ring, jwk } = await makeKeyRing(alg);
      rings.set(`Gatehouse ${alg}`, ring);
      ringJwks.push(jwk);
    }
    const byName = (name: string) => keys.find((key) => key.name === name)!;
    const x25519Jwk = generateKeyPairSync('x25519').publicKey.export({ format: 'jwk' }) as JWK;
    const sets: Array<[string, JWK[]]> = [
      ['every key', [...keys.map((key) => key.jwk), ...ringJwks]],
      ['one ES256 key', [keys[0]!.jwk]],
      // One key per curve or algorithm, plus an X25519 key: a token without kid still finds exactly one.
      [
        'one key per algorithm',
        [...['ES256', 'RS256', 'EdDSA', 'ES384', 'PS256'].map((name) => byName(name).jwk), x25519Jwk],
      ],
      ['Gatehouse keys', ringJwks],
    ];
    for (const [name, members] of sets) {
      const jwks = JSON.parse(JSON.stringify({ keys: members })) as JSONWebKeySet;
      const lean = KeySet.parse(jwks);
      assert.ok(lean !== undefined);
      keySets.push({ name, jwks, lean, jose: createLocalJWKSet(jwks) });
    }
  });

  function build(recipe: Recipe): string {
    const claims = structuredClone(recipe.claims);
    for (const name of recipe.claimMutations) CLAIM_MUTATIONS[name]!(claims);
    const ring = rings.get(recipe.key);
    if (ring !== undefined) return ring.signJwt(claims);
    const key = keys.find((candidate) => candidate.name === recipe.key)!;
    const header: Header = { alg: key.alg, typ: 'at+jwt', kid: key.jwk.kid };
    for (const name of recipe.headerMutations) HEADER_MUTATIONS[name]!(header, keys);
    if (
      recipe.signer === 'HS256 with the public key' &&
      recipe.headerMutations.every((m) => !m.startsWith('alg '))
    ) {
      header.alg = 'HS256';
    }
    if (recipe.signer === 'none' && recipe.headerMutations.every((m) => !m.startsWith('alg ')))
      header.alg = 'none';
    const headerJson = JSON.stringify(header);
    const payloadJson = JSON.stringify(claims);
    const encodedHeader = b64(
      recipe.rawHeader === undefined ? headerJson : RAW_HEADER_MUTATIONS[recipe.rawHeader]!(headerJson),
    );
    const encodedPayload = b64(
      recipe.rawPayload === undefined ? payloadJson : RAW_PAYLOAD_MUTATIONS[recipe.rawPayload]!(payloadJson),
    );
    const input = Buffer.from(`${encodedHeader}.${encodedPayload}`);
    let signature: Buffer;
    switch (recipe.signer) {
      case 'own key':
        signature = signWith(key.alg, key.privateKey, input);
        break;
      case 'own key, as the header says':
        // A correct signature under the header's algorithm when the key can make one: alg/key
        // consistency is then the only thing that can refuse it.
        try {
          signature = signWith(String(header.alg), key.privateKey, input);
        } catch {
          signature = signWith(key.alg, key.privateKey, input);
        }
        break;
      case 'unpublished key': {
        const type =
          key.privateKey.asymmetricKeyType === 'rsa'
            ? 'RSA'
            : key.privateKey.asymmetricKeyType === 'ec'
              ? 'EC'
              : 'OKP';
        const other = unpublished.get(type)!;
        try {
          signature = signWith(key.alg, other, input);
        } catch {
          signature = signWith('ES256', unpublished.get('EC')!, input);
        }
        break;
      }
      case 'HS256 with the public key':
        // The classic algorithm confusion: the published key used as an HMAC secret.
        signature = createHmac('sha256', JSON.stringify(key.jwk)).update(input).digest();
        break;
      case 'none':
        signature = Buffer.alloc(0);
        break;
      default:
        throw new Error(recipe.signer);
    }
    const token = `${encodedHeader}.${encodedPayload}.${b64(signature)}`;
    return recipe.tokenMutation === undefined ? token : JWT_MUTATIONS[recipe.tokenMutation]!(token);
  }

  async function compare(token: string, label: string): Promise<void> {
    for (const set of keySets) {
      for (const config of CONFIGS) {
        const context = `${label}\n  key set: ${set.name}; config: ${config.name}\n  token: ${token}`;
        const jose = await viaJose(token, set.jose, config);
        const outcome: JwtVerification = leanVerifier(config).verify(token, set.lean, NOW);
        const strict = withinStrictProfile(token);
        tally.comparisons++;
        if (jose.accepted && !strict) tally.stricterThanJose++;
        assert.equal(
          outcome.valid,
          jose.accepted && strict,
          `${outcome.valid ? 'lean accepted' : 'lean refused'}: ${context}`,
        );
        if (outcome.valid && jose.accepted) {
          tally.accepted++;
          assert.deepEqual(outcome.claims, jose.claims, context);
        } else {
          tally.refused++;
        }
        if (!outcome.valid && !jose.accepted && strict) {
          // The reason the library reports agrees with jose's where jose's is specific.
          assert.equal(
            outcome.reason === 'expired',
            jose.error instanceof errors.JWTExpired,
            `expiry: ${context}`,
          );
          if (outcome.reason === 'unknown-key') {
            assert.ok(jose.error instanceof errors.JWKSNoMatchingKey, `unknown key: ${context}`);
          }
        }
      }
    }
  }

  const someOf = (names: string[], max: number) =>
    fc.oneof(
      { weight: 3, arbitrary: fc.constant<string[]>([]) },
      { weight: 2, arbitrary: fc.uniqueArray(fc.constantFrom(...names), { minLength: 1, maxLength: max }) },
    );
  const maybeOne = (names: string[], weight: number) =>
    fc.oneof(
      { weight, arbitrary: fc.constant(undefined) },
      { weight: 1, arbitrary: fc.constantFrom(...names) },
    );

  const recipes = () =>
    fc.record({
      key: fc.constantFrom(...keys.map((key) => key.name), ...rings.keys()),
      signer: fc.oneof(
        { weight: 6, arbitrary: fc.constant<Signer>('own key') },
        { weight: 2, arbitrary: fc.constantFrom(...SIGNERS) },
      ),
      claims: fc.record({
        iss: fc.constant(ISSUER),
        aud: fc.constantFrom<unknown>(ISSUER, [ISSUER], [OTHER_AUDIENCE, ISSUER]),
        sub: fc.string({ maxLength: 40 }),
        client_id: fc.string({ maxLength: 40 }),
        scope: fc.constantFrom('read', 'read write', '', 'notes:read admin'),
        iat: fc.integer({ min: NOW - 7200, max: NOW }),
        exp: fc.integer({ min: NOW + 1, max: NOW + 7200 }),
        jti: fc.uuid(),
      }),
      claimMutations: someOf(Object.keys(CLAIM_MUTATIONS), 2),
      rawPayload: maybeOne(Object.keys(RAW_PAYLOAD_MUTATIONS), 25),
      headerMutations: someOf(Object.keys(HEADER_MUTATIONS), 2),
      rawHeader: maybeOne(Object.keys(RAW_HEADER_MUTATIONS), 40),
      tokenMutation: maybeOne(Object.keys(JWT_MUTATIONS), 6),
    });

  it('accepts exactly what jose accepts (within the canonical, crit-free profile), with equal claims', async (t) => {
    await fc.assert(
      fc.asyncProperty(recipes(), async (recipe) => {
        const fixed: Recipe = {
          ...recipe,
          signer: rings.has(recipe.key) ? 'Gatehouse KeyRing' : recipe.signer,
        };
        await compare(build(fixed), JSON.stringify(fixed));
      }),
      { numRuns: RUNS },
    );
    t.diagnostic(`comparisons: ${JSON.stringify(tally)}`);
    // The property could pass vacuously if nearly everything were refused, or accepted.
    assert.ok(tally.accepted > tally.comparisons * 0.05, JSON.stringify(tally));
    assert.ok(tally.refused > tally.comparisons * 0.3, JSON.stringify(tally));
  });

  it('covers every mutation by name, on a valid token of every key', async () => {
    const base: Omit<Recipe, 'key'> = {
      signer: 'own key',
      claims: {
        iss: ISSUER,
        aud: ISSUER,
        sub: 'user-1',
        client_id: 'client-1',
        scope: 'read',
        iat: NOW,
        exp: NOW + 600,
        jti: 'j-1',
      },
      claimMutations: [],
      rawPayload: undefined,
      headerMutations: [],
      rawHeader: undefined,
      tokenMutation: undefined,
    };
    const recipesByName: Recipe[] = [];
    for (const key of [...keys.map((k) => k.name), ...rings.keys()]) {
      const signer = rings.has(key) ? 'Gatehouse KeyRing' : 'own key';
      recipesByName.push({ ...base, key, signer });
      for (const signerName of SIGNERS)
        if (!rings.has(key)) recipesByName.push({ ...base, key, signer: signerName });
      for (const name of Object.keys(CLAIM_MUTATIONS))
        recipesByName.push({ ...base, key, signer, claimMutations: [name] });
      for (const name of Object.keys(JWT_MUTATIONS))
        recipesByName.push({ ...base, key, signer, tokenMutation: name });
      if (rings.has(key)) continue;
      for (const name of Object.keys(RAW_PAYLOAD_MUTATIONS))
        recipesByName.push({ ...base, key, signer, rawPayload: name });
      for (const name of Object.keys(HEADER_MUTATIONS)) {
        recipesByName.push({ ...base, key, signer, headerMutations: [name] });
        recipesByName.push({ ...base, key, signer: 'own key, as the header says', headerMutations: [name] });
      }
      for (const name of Object.keys(RAW_HEADER_MUTATIONS))
        recipesByName.push({ ...base, key, signer, rawHeader: name });
    }
    for (const recipe of recipesByName) await compare(build(recipe), JSON.stringify(recipe));
  });

  it('is stricter than jose only where documented: padding, unused bits, crit and b64', async () => {
    const base: Recipe = {
      key: 'ES256',
      signer: 'own key',
      claims: { iss: ISSUER, aud: ISSUER, sub: 's', client_id: 'c', iat: NOW, exp: NOW + 600, jti: 'j' },
      claimMutations: [],
      rawPayload: undefined,
      headerMutations: [],
      rawHeader: undefined,
      tokenMutation: undefined,
    };
    const [set] = keySets;
    const config = CONFIGS[0]!;
    for (const variant of [
      { tokenMutation: 'pad the signature' },
      { tokenMutation: 'non-canonical signature tail' },
      { headerMutations: ['crit b64 true'] },
      { headerMutations: ['b64 false'] },
    ]) {
      const token = build({ ...base, ...variant });
      const jose = await viaJose(token, set!.jose, config);
      assert.equal(jose.accepted, true, `jose accepts ${JSON.stringify(variant)}`);
      assert.equal(leanVerifier(config).verify(token, set!.lean, NOW).valid, false, JSON.stringify(variant));
    }
    // And the plain token, for contrast.
    assert.equal(leanVerifier(config).verify(build(base), set!.lean, NOW).valid, true);
  });
});
