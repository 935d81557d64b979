import assert from 'node:assert/strict';
import { createHmac, type KeyObject } from 'node:crypto';
import { before, describe, it } from 'node:test';
import fc from 'fast-check';
import {
  calculateJwkThumbprint,
  decodeProtectedHeader,
  EmbeddedJWK,
  jwtVerify,
  type JWK,
  type JWTPayload,
} from 'jose';
import {
  b64,
  flipLastBit,
  nonCanonicalTail,
  pairs,
  rawPayloadMutations,
  signWith,
  TOKEN_MUTATIONS,
  type Claims,
  type Header,
  type KeyPair,
} from '../helpers/jws-mutations.js';
import { DpopProofFastPath } from '#resource-server-internals/dpop-proof-fast-path.js';
import { DEFAULT_DPOP_ALGORITHMS } from '#resource-server-internals/dpop-proof.js';

/**
 * The DPoP proof fast path (synchronous node:crypto, keys cached by thumbprint) against the jose call
 * it stands in for (jwtVerify with EmbeddedJWK, then calculateJwkThumbprint): over valid proofs of every
 * key type and mutations of every kind, whatever it accepts jose accepts too, with equal claims and
 * thumbprint; and the plain proofs clients make it accepts itself (so that they are fast). Where it
 * does not accept, the verifier asks jose, so the outcome is jose's by construction.
 */

const RUNS = Number(process.env.GATEHOUSE_FUZZ_RUNS ?? 600);
const NOW = 1_800_000_000;
const HTU = 'https://api.example.test/notes';

interface TestKey {
  name: string;
  alg: string;
  privateKey: KeyObject;
  /** The public JWK as a client puts it in the header: its key members only. */
  jwk: Record<string, unknown>;
}

function makeKey(name: string, alg: string, pair: KeyPair): TestKey {
  const jwk = pair.publicKey.export({ format: 'jwk' }) as Record<string, unknown>;
  return { name, alg, privateKey: pair.privateKey, jwk };
}

const CLAIM_MUTATIONS: Record<string, (claims: Claims) => void> = {
  ...Object.fromEntries(
    ['jti', 'htm', 'htu', 'iat', 'ath'].map((claim) => [`drop ${claim}`, (c: Claims) => delete c[claim]]),
  ),
  'jti number': (c) => (c.jti = 7),
  'jti empty': (c) => (c.jti = ''),
  'htm number': (c) => (c.htm = 1),
  'htu object': (c) => (c.htu = { href: HTU }),
  'iat string': (c) => (c.iat = String(NOW)),
  'iat null': (c) => (c.iat = null),
  'iat future': (c) => (c.iat = NOW + 3600),
  'iat fraction': (c) => (c.iat = NOW + 0.5),
  'exp past': (c) => (c.exp = NOW - 60),
  'exp future': (c) => (c.exp = NOW + 60),
  'exp string': (c) => (c.exp = 'soon'),
  'nbf future': (c) => (c.nbf = NOW + 60),
  'nbf past': (c) => (c.nbf = NOW - 60),
  'nonce claim': (c) => (c.nonce = 'n-1'),
  'extra claims': (c) => Object.assign(c, { extra: { nested: [1, 2] } }),
};

const RAW_PAYLOAD_MUTATIONS = rawPayloadMutations('iat', 'htu', 'https://evil.test/');

const HEADER_MUTATIONS: Record<string, (header: Header, keys: readonly TestKey[]) => void> = {
  'typ drop': (h) => delete h.typ,
  ...Object.fromEntries(
    [
      'DPOP+JWT',
      'application/dpop+jwt',
      'Application/DPoP+JWT',
      'jwt',
      'at+jwt',
      'dpop+jwt ',
      'x/dpop+jwt',
    ].map((typ) => [`typ ${typ}`, (h: Header) => (h.typ = typ)]),
  ),
  'typ number': (h) => (h.typ = 1),
  ...Object.fromEntries(
    ['ES256', 'ES384', 'ES512', 'RS256', 'PS256', 'EdDSA', 'Ed25519', 'none', 'HS256', '', 'es256'].map(
      (alg) => [`alg ${alg || '(empty)'}`, (h: Header) => (h.alg = alg)],
    ),
  ),
  'alg drop': (h) => delete h.alg,
  'alg number': (h) => (h.alg = 256),
  'jwk drop': (h) => delete h.jwk,
  'jwk string': (h) => (h.jwk = 'key'),
  'jwk array': (h) => (h.jwk = [h.jwk]),
  'jwk of another key': (h, keys) =>
    (h.jwk = keys.find((key) => JSON.stringify(key.jwk) !== JSON.stringify(h.jwk))?.jwk),
  'jwk with kid': (h) => (h.jwk = { ...(h.jwk as object), kid: 'k1' }),
  'jwk with its alg': (h) => (h.jwk = { ...(h.jwk as object), alg: h.alg }),
  'jwk with another alg': (h) => (h.jwk = { ...(h.jwk as object), alg: 'RS512' }),
  'jwk use sig': (h) => (h.jwk = { ...(h.jwk as object), use: 'sig' }),
  'jwk use enc': (h) => (h.jwk = { ...(h.jwk as object), use: 'enc' }),
  'jwk key_ops sign': (h) => (h.jwk = { ...(h.jwk as object), key_ops: ['sign'] }),
  'jwk ext false': (h) => (h.jwk = { ...(h.jwk as object), ext: false }),
  'jwk private d': (h) => (h.jwk = { ...(h.jwk as object), d: b64(Buffer.alloc(32, 1)) }),
  'jwk kty oct': (h) => (h.jwk = { ...(h.jwk as object), kty: 'oct' }),
  'jwk kty swapped': (h) => {
    const jwk = (h.jwk ?? {}) as Record<string, unknown>; // after "jwk drop", a mutation of nothing
    h.jwk = { ...jwk, kty: jwk.kty === 'EC' ? 'OKP' : 'EC' };
  },
  'jwk crv P-384': (h) => (h.jwk = { ...(h.jwk as object), crv: 'P-384' }),
  'jwk crv drop': (h) => {
    const jwk = { ...(h.jwk as Record<string, unknown>) };
    delete jwk.crv;
    h.jwk = jwk;
  },
  'jwk x off the curve': (h) => {
    const jwk = (h.jwk ?? {}) as Record<string, unknown>; // after "jwk drop", a mutation of nothing
    if (typeof jwk.x === 'string') h.jwk = { ...jwk, x: flipLastBit(jwk.x) };
  },
  'jwk x padded': (h) => {
    const jwk = (h.jwk ?? {}) as Record<string, unknown>; // after "jwk drop", a mutation of nothing
    if (typeof jwk.x === 'string') h.jwk = { ...jwk, x: `${jwk.x}=` };
  },
  'jwk x short': (h) => {
    const jwk = (h.jwk ?? {}) as Record<string, unknown>; // after "jwk drop", a mutation of nothing
    if (typeof jwk.x === 'string') h.jwk = { ...jwk, x: b64(Buffer.from(jwk.x, 'base64url').subarray(1)) };
  },
  'jwk n leading zero': (h) => {
    const jwk = (h.jwk ?? {}) as Record<string, unknown>; // after "jwk drop", a mutation of nothing
    if (typeof jwk.n === 'string') {
      h.jwk = { ...jwk, n: b64(Buffer.concat([Buffer.alloc(1), Buffer.from(jwk.n, 'base64url')])) };
    }
  },
  'jwk e empty': (h) => {
    const jwk = (h.jwk ?? {}) as Record<string, unknown>; // after "jwk drop", a mutation of nothing
    if (typeof jwk.e === 'string') h.jwk = { ...jwk, e: '' };
  },
  'jwk member order': (h) => {
    const jwk = (h.jwk ?? {}) as Record<string, unknown>; // after "jwk drop", a mutation of nothing
    h.jwk = Object.fromEntries(Object.entries(jwk).reverse());
  },
  'header member order': (h) => {
    const entries = Object.entries(h).reverse();
    for (const name of Object.keys(h)) delete h[name];
    Object.assign(h, Object.fromEntries(entries));
  },
  'extra kid': (h) => (h.kid = 'k1'),
  'crit exp': (h) => (h.crit = ['exp']),
  'crit b64 false': (h) => Object.assign(h, { crit: ['b64'], b64: false }),
  'b64 true': (h) => (h.b64 = true),
  'extra jku': (h) => (h.jku = 'https://evil.test/jwks'),
};

const PROOF_MUTATIONS: Record<string, (token: string) => string> = {
  ...TOKEN_MUTATIONS,
  'non-canonical header tail': (t) => nonCanonicalTail(t, 0),
  'standard base64 alphabet': (t) => t.replace(/-/g, '+').replace(/_/g, '/'),
  'signature of the DER form': (t) => t.slice(0, t.lastIndexOf('.') + 1) + b64(Buffer.alloc(72, 0x30)),
};

const SIGNERS = ['own key', 'as the header says', 'another key', 'HS256 with the jwk', 'none'] as const;
type Signer = (typeof SIGNERS)[number];

interface Recipe {
  key: string;
  signer: Signer;
  claims: Claims;
  claimMutations: string[];
  rawPayload: string | undefined;
  headerMutations: string[];
  tokenMutation: string | undefined;
}

interface Config {
  name: string;
  algorithms: readonly string[];
  leeway: number;
}
const CONFIGS: Config[] = [
  { name: 'defaults', algorithms: DEFAULT_DPOP_ALGORITHMS, leeway: 5 },
  { name: 'every curve, no leeway', algorithms: ['ES256', 'ES384', 'ES512', 'Ed25519', 'PS256'], leeway: 0 },
];
// One fast path per configuration for the whole run, as a verifier keeps one: its caches are under test.
const fastPaths = new Map(CONFIGS.map((config) => [config, new DpopProofFastPath(config.algorithms, 8)]));

type JoseOutcome = { accepted: true; payload: JWTPayload; jkt: string } | { accepted: false };

/** What the verifier did before the fast path: jose's jwtVerify with the embedded key, then the thumbprint. */
async function viaJose(proof: string, config: Config): Promise<JoseOutcome> {
  try {
    const jwk = decodeProtectedHeader(proof).jwk as Record<string, unknown> | undefined;
    if (jwk === undefined || 'd' in jwk || 'k' in jwk || 'p' in jwk || jwk.kty === 'oct') {
      return { accepted: false };
    }
    const { payload } = await jwtVerify(proof, EmbeddedJWK, {
      typ: 'dpop+jwt',
      algorithms: [...config.algorithms],
      requiredClaims: ['jti', 'htm', 'htu', 'iat'],
      currentDate: new Date(NOW * 1000),
      clockTolerance: config.leeway,
    });
    return { accepted: true, payload, jkt: await calculateJwkThumbprint(jwk as JWK, 'sha256') };
  } catch {
    return { accepted: false };
  }
}

describe('DPoP proof fast path: differential against jose jwtVerify with EmbeddedJWK', () => {
  const keys: TestKey[] = [];
  const tally = { fast: 0, joseOnly: 0, refused: 0, comparisons: 0 };

  before(() => {
    keys.push(
      makeKey('ES256', 'ES256', pairs.ec('P-256')),
      makeKey('ES256 second', 'ES256', pairs.ec('P-256')),
      makeKey('ES384', 'ES384', pairs.ec('P-384')),
      makeKey('ES512', 'ES512', pairs.ec('P-521')),
      makeKey('RS256', 'RS256', pairs.rsa(2048)),
      makeKey('PS256', 'PS256', pairs.rsa(2048)),
      makeKey('RSA 1024', 'RS256', pairs.rsa(1024)),
      makeKey('EdDSA', 'EdDSA', pairs.ed25519()),
      makeKey('Ed25519', 'Ed25519', pairs.ed25519()),
    );
  });

  function build(recipe: Recipe): string {
    const key = keys.find((candidate) => candidate.name === recipe.key)!;
    const claims = structuredClone(recipe.claims);
    for (const name of recipe.claimMutations) CLAIM_MUTATIONS[name]!(claims);
    const header: Header = { typ: 'dpop+jwt', alg: key.alg, jwk: key.jwk };
    for (const name of recipe.headerMutations) HEADER_MUTATIONS[name]!(header, keys);
    if (recipe.signer === 'HS256 with the jwk') header.alg = 'HS256';
    if (recipe.signer === 'none') header.alg = 'none';
    const payloadJson = JSON.stringify(claims);
    const encodedHeader = b64(JSON.stringify(header));
    const encodedPayload = b64(
      recipe.rawPayload === undefined ? payloadJson : RAW_PAYLOAD_MUTATIONS[recipe.rawPayload]!(payloadJson),
    );
    const input = Buffer.from(`${encodedHeader}.${encodedPayload}`);
    let signature: Buffer;
    switch (recipe.signer) {
      case 'own key':
        signature = signWith(key.alg, key.privateKey, input);
        break;
      case 'as the header says':
        try {
          signature = signWith(String(header.alg), key.privateKey, input);
        } catch {
          signature = signWith(key.alg, key.privateKey, input);
        }
        break;
      case 'another key': {
        const other = keys.find((k) => k.alg === key.alg && k.name !== key.name) ?? keys[0]!;
        signature = signWith(other.alg, other.privateKey, input);
        break;
      }
      case 'HS256 with the jwk':
        signature = createHmac('sha256', JSON.stringify(key.jwk)).update(input).digest();
        break;
      case 'none':
        signature = Buffer.alloc(0);
        break;
    }
    const token = `${encodedHeader}.${encodedPayload}.${b64(signature)}`;
    return recipe.tokenMutation === undefined ? token : PROOF_MUTATIONS[recipe.tokenMutation]!(token);
  }

  /** The property; returns whether the fast path accepted under the first configuration. */
  async function compare(proof: string, label: string): Promise<boolean> {
    let acceptedFirst = false;
    for (const config of CONFIGS) {
      const context = `${label}\n  config: ${config.name}\n  proof: ${proof}`;
      const jose = await viaJose(proof, config);
      const fast = fastPaths.get(config)!.check(proof);
      tally.comparisons++;
      if (fast !== undefined) {
        tally.fast++;
        assert.ok(jose.accepted, `the fast path accepted what jose refuses: ${context}`);
        assert.deepEqual(fast.payload, jose.payload, context);
        assert.equal(fast.jkt, jose.jkt, context);
        if (config === CONFIGS[0]) acceptedFirst = true;
      } else if (jose.accepted) {
        tally.joseOnly++;
      } else {
        tally.refused++;
      }
    }
    return acceptedFirst;
  }

  const claims = () =>
    fc.record({
      jti: fc.uuid(),
      htm: fc.constantFrom('GET', 'POST'),
      htu: fc.constant(HTU),
      iat: fc.integer({ min: NOW - 120, max: NOW + 120 }),
      ath: fc.constant(b64(Buffer.alloc(32, 7))),
    });
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

  it('accepts only what jose accepts, with jose’s claims and thumbprint', async (t) => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          key: fc.constantFrom(...keys.map((key) => key.name)),
          signer: fc.oneof(
            { weight: 6, arbitrary: fc.constant<Signer>('own key') },
            { weight: 2, arbitrary: fc.constantFrom(...SIGNERS) },
          ),
          claims: claims(),
          claimMutations: someOf(Object.keys(CLAIM_MUTATIONS), 2),
          rawPayload: maybeOne(Object.keys(RAW_PAYLOAD_MUTATIONS), 25),
          headerMutations: someOf(Object.keys(HEADER_MUTATIONS), 2),
          tokenMutation: maybeOne(Object.keys(PROOF_MUTATIONS), 6),
        }),
        async (recipe) => {
          await compare(build(recipe), JSON.stringify(recipe));
        },
      ),
      { numRuns: RUNS },
    );
    t.diagnostic(`comparisons: ${JSON.stringify(tally)}`);
    // Not vacuous: both accepted and refused proofs were seen in numbers.
    assert.ok(tally.fast > tally.comparisons * 0.1, JSON.stringify(tally));
    assert.ok(tally.refused > tally.comparisons * 0.2, JSON.stringify(tally));
  });

  it('covers every mutation by name, on a valid proof of every key', async () => {
    const base: Omit<Recipe, 'key'> = {
      signer: 'own key',
      claims: { jti: 'j-1', htm: 'GET', htu: HTU, iat: NOW, ath: b64(Buffer.alloc(32, 7)) },
      claimMutations: [],
      rawPayload: undefined,
      headerMutations: [],
      tokenMutation: undefined,
    };
    for (const key of keys.map((k) => k.name)) {
      const plain = await compare(build({ ...base, key }), `${key} plain`);
      // A client's ordinary proof takes the fast path (every default algorithm; RSA 1024 is refused).
      const expected =
        key !== 'RSA 1024' && DEFAULT_DPOP_ALGORITHMS.includes(keys.find((k) => k.name === key)!.alg);
      assert.equal(plain, expected, `${key}: fast path ${plain ? 'taken' : 'not taken'}`);
      for (const signer of SIGNERS) await compare(build({ ...base, key, signer }), `${key} ${signer}`);
      for (const name of Object.keys(CLAIM_MUTATIONS))
        await compare(build({ ...base, key, claimMutations: [name] }), `${key} ${name}`);
      for (const name of Object.keys(RAW_PAYLOAD_MUTATIONS))
        await compare(build({ ...base, key, rawPayload: name }), `${key} ${name}`);
      for (const name of Object.keys(HEADER_MUTATIONS)) {
        await compare(build({ ...base, key, headerMutations: [name] }), `${key} ${name}`);
        await compare(
          build({ ...base, key, signer: 'as the header says', headerMutations: [name] }),
          `${key} ${name}, signed as the header says`,
        );
      }
      for (const name of Object.keys(PROOF_MUTATIONS))
        await compare(build({ ...base, key, tokenMutation: name }), `${key} ${name}`);
    }
  });

  it('keeps at most its cache size of keys, and still verifies an evicted key’s proofs', async () => {
    const fastPath = new DpopProofFastPath(DEFAULT_DPOP_ALGORITHMS, 2);
    const claims = { jti: 'j', htm: 'GET', htu: HTU, iat: NOW };
    const proofOf = (key: TestKey) => {
      const input = `${b64(JSON.stringify({ typ: 'dpop+jwt', alg: key.alg, jwk: key.jwk }))}.${b64(JSON.stringify(claims))}`;
      return `${input}.${b64(signWith(key.alg, key.privateKey, Buffer.from(input)))}`;
    };
    const three = ['ES256', 'ES256 second', 'EdDSA'].map((name) => keys.find((k) => k.name === name)!);
    for (const key of [...three, ...three]) {
      assert.ok(fastPath.check(proofOf(key)) !== undefined, key.name);
      assert.ok(fastPath.cachedKeys <= 2);
    }
  });
});
