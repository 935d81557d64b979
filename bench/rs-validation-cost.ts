/**
 * CPU per validation of the resource-server library next to the bare signature checks, as the least
 * of many short rounds (a neighbour can only slow a round down): the quiet counterpart of the rs-jwt
 * and rs-dpop scenarios on a busy machine. One process, no concurrency, no server: tokens signed here.
 *
 *   node dist/bench/rs-validation-cost.js [--alg ES256|RS256] [--rounds 30] [--library DIR]
 *
 * `decoded` is the least any JWT validation can do: the token's signature and signing input decoded
 * from the token each time and its claims parsed, then the bare check; what the library adds beyond
 * that is its own cost (header, key and claim checks), apart from the decoding every verifier needs.
 * `decoded2` is the same for a DPoP request: token and proof decoded and parsed, and the `ath` hash.
 *
 * `--library` loads another build of the library (its dist/ directory, e.g. one built from an older
 * commit in a scratch worktree) for an A/B comparison; by default, this checkout's. Prints one line.
 */
import {
  createHash,
  createPublicKey,
  generateKeyPairSync,
  randomUUID,
  sign,
  type KeyObject,
} from 'node:crypto';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { bareCheck, decodedCheck, decodedDpopCheck } from './lib/jws-floor.js';

type Library = typeof import('gatehouse-oauth-resource-server');

const { values } = parseArgs({
  options: {
    alg: { type: 'string', default: 'ES256' },
    rounds: { type: 'string', default: '30' },
    library: { type: 'string' },
  },
});
const alg = values.alg === 'RS256' ? 'RS256' : 'ES256';
const library = (
  values.library === undefined
    ? await import('gatehouse-oauth-resource-server')
    : await import(pathToFileURL(resolve(values.library, 'index.js')).href)
) as Library;

const ISSUER = 'https://as.bench.test';
const NOW = Math.floor(Date.now() / 1000);
const OPS = 1500;
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const signed = (input: string, key: KeyObject, rsa: boolean) =>
  (rsa
    ? sign('sha256', Buffer.from(input), key)
    : sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' })
  ).toString('base64url');

const tokenPair =
  alg === 'RS256'
    ? generateKeyPairSync('rsa', { modulusLength: 2048 })
    : generateKeyPairSync('ec', { namedCurve: 'P-256' });
const jwk = { ...tokenPair.publicKey.export({ format: 'jwk' }), kid: 'k1', alg, use: 'sig' };
const proofPair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const { x, y } = proofPair.publicKey.export({ format: 'jwk' });
const proofJwk = { kty: 'EC', crv: 'P-256', x, y };
const jkt = createHash('sha256')
  .update(JSON.stringify({ crv: 'P-256', kty: 'EC', x, y }))
  .digest('base64url');

/** An RFC 9068 token of Gatehouse's shape (its claims), with `extra` claims. */
function accessToken(extra: Record<string, unknown>): string {
  const claims = {
    iss: ISSUER,
    aud: ISSUER,
    sub: 'user-12345',
    client_id: 'client-abc',
    iat: NOW,
    exp: NOW + 3600,
  };
  const input = `${b64({ alg, typ: 'at+jwt', kid: 'k1' })}.${b64({ ...claims, jti: randomUUID(), scope: 'read write', gid: randomUUID(), ...extra })}`;
  return `${input}.${signed(input, tokenPair.privateKey, alg === 'RS256')}`;
}
const bearerToken = accessToken({});
const dpopToken = accessToken({ cnf: { jkt } });
const ath = createHash('sha256').update(dpopToken).digest('base64url');
// Made just before each round (the clock's now: a slow run outlasts the proof window of 60 s).
const makeProof = () => {
  const input = `${b64({ typ: 'dpop+jwt', alg: 'ES256', jwk: proofJwk })}.${b64({ jti: randomUUID(), htm: 'GET', htu: 'https://api.bench.test/notes', iat: Math.floor(Date.now() / 1000), ath })}`;
  return `${input}.${signed(input, proofPair.privateKey, false)}`;
};

const body = JSON.stringify({ keys: [jwk] });
const server = new library.ResourceServer({
  issuer: ISSUER,
  jwksUri: `${ISSUER}/jwks`,
  fetch: async () => new Response(body, { status: 200 }),
  verifiedTokenCacheSize: 0,
  dpop: {
    origin: 'https://api.bench.test',
    replayStore: new library.MemoryDpopReplayStore({ maxEntries: 10_000_000 }),
  },
});

const tokenKey = createPublicKey({ key: jwk, format: 'jwk' });
const proofKey = createPublicKey({ key: proofJwk, format: 'jwk' });
const tokenSignature = bareCheck(alg, bearerToken, tokenKey);
const proofSignature = bareCheck('ES256', makeProof(), proofKey);
const tokenDecoded = decodedCheck(alg, tokenKey);
const proofDecoded = decodedCheck('ES256', proofKey);
const boundProof = makeProof();
const boundDecoded = decodedDpopCheck(dpopToken, tokenDecoded, proofDecoded, ath);

let proofs: string[] = [];
const request = (authorization: string, dpop?: string) => ({
  method: 'GET',
  url: '/notes',
  host: 'api.bench.test',
  protocol: 'https' as const,
  authorization,
  ...(dpop === undefined ? {} : { dpop: [dpop] }),
});
const paths: Record<string, { run: () => Promise<unknown>; proofs?: true }> = {
  floor: { run: async () => tokenSignature() || Promise.reject(new Error('no')) },
  decoded: { run: async () => tokenDecoded(bearerToken) || Promise.reject(new Error('no')) },
  bearer: { run: () => server.authorize(request(`Bearer ${bearerToken}`)) },
  floor2: { run: async () => (tokenSignature() && proofSignature()) || Promise.reject(new Error('no')) },
  decoded2: { run: async () => boundDecoded(boundProof) || Promise.reject(new Error('no')) },
  dpop: { run: () => server.authorize(request(`DPoP ${dpopToken}`, proofs.pop())), proofs: true },
};

const least: Record<string, number> = {};
for (let round = 0; round < Number(values.rounds); round++) {
  for (const [name, path] of Object.entries(paths)) {
    if (path.proofs) proofs = Array.from({ length: OPS }, makeProof);
    const before = process.cpuUsage();
    for (let i = 0; i < OPS; i++) await path.run();
    const used = process.cpuUsage(before);
    // The first round warms up.
    if (round > 0) least[name] = Math.min(least[name] ?? Infinity, (used.user + used.system) / OPS);
  }
}
server.close();
const us = (name: string) => `${name} ${(least[name] ?? NaN).toFixed(2)} us`;
const share = (floor: string, path: string) =>
  `${(((least[floor] ?? NaN) / (least[path] ?? NaN)) * 100).toFixed(1)}%`;
process.stdout.write(
  `${alg}, CPU per operation, least of ${Number(values.rounds) - 1} rounds of ${OPS}: ` +
    `${['floor', 'decoded', 'bearer', 'floor2', 'decoded2', 'dpop'].map(us).join(', ')}; ` +
    `bearer ${share('floor', 'bearer')} of the floor (decoding and parsing alone: ` +
    `${share('floor', 'decoded')}; bearer ${share('decoded', 'bearer')} of that), ` +
    `DPoP ${share('floor2', 'dpop')} of the two-signature floor (with decoding, parsing and ath: ` +
    `${share('floor2', 'decoded2')}; DPoP ${share('decoded2', 'dpop')} of that)\n`,
);
