/**
 * The rs-dpop benchmark's loop: the resource-server library validating a DPoP-bound token from the
 * running Gatehouse, each time with a new proof (RFC 9449 §7: the proof is single use), next to a
 * bearer token of the same client, to the proof-making alone, to the floor: the two signature
 * checks of synchronous node:crypto (the token's and the proof's), and to the decoded floor: those
 * checks on parts taken from the token and each new proof, claims parsed, and `ath`
 * (bench/lib/jws-floor.ts). In interleaved rounds, `--concurrency` validations in flight, the
 * validated-token cache off. The proofs a round validates are made before it starts (its CPU time is
 * the validations'), as many as it can use. Run pinned to one core; prints one JSON line.
 */
import { createHash, createPrivateKey, createPublicKey, type JsonWebKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { MemoryDpopReplayStore, ResourceServer, type RequestInfo } from 'gatehouse-oauth-resource-server';
import { syncProof, type SyncProofKey } from './lib/dpop-proofs.js';
import { httpsRequest } from './lib/https.js';
import { bareCheck, decodedCheck, decodedDpopCheck } from './lib/jws-floor.js';

const { values } = parseArgs({
  options: {
    issuer: { type: 'string' },
    'jwks-uri': { type: 'string' },
    'ca-file': { type: 'string' },
    'secrets-file': { type: 'string' },
    seconds: { type: 'string', default: '20' },
    rounds: { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '16' },
  },
});
const required = (name: keyof typeof values): string => {
  const value = values[name];
  if (typeof value !== 'string') throw new Error(`--${name} is required`);
  return value;
};
const issuer = required('issuer');
const jwksUri = required('jwks-uri');
const ca = readFileSync(required('ca-file'), 'utf8');
const secrets = JSON.parse(readFileSync(required('secrets-file'), 'utf8')) as {
  token: string;
  bearerToken: string;
  privateJwk: JsonWebKey & { crv: string; x: string; y: string };
};
const rounds = Number(values.rounds);
const concurrency = Number(values.concurrency);
// Per round: DPoP and bearer a slice each, the proof-making and the two floors half of one each.
const slice = Number(values.seconds) / rounds / 3.5;

const { privateJwk } = secrets;
const jwk = { kty: 'EC', crv: privateJwk.crv, x: privateJwk.x, y: privateJwk.y };
const key: SyncProofKey = {
  privateKey: createPrivateKey({ key: privateJwk, format: 'jwk' }),
  jwk,
  jkt: createHash('sha256')
    .update(JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y }))
    .digest('base64url'),
};
const ORIGIN = 'https://api.bench.test';
const library = new ResourceServer({
  issuer,
  jwksUri,
  ca,
  verifiedTokenCacheSize: 0,
  // Room for every proof of the window at any rate this loop reaches.
  dpop: { origin: ORIGIN, replayStore: new MemoryDpopReplayStore({ maxEntries: 10_000_000 }) },
});
const request = (authorization: string, dpop?: string): RequestInfo => ({
  method: 'GET',
  url: '/notes',
  host: 'api.bench.test',
  protocol: 'https',
  authorization,
  ...(dpop === undefined ? {} : { dpop: [dpop] }),
});

/** Proofs made ahead of a round, each used once; made in the loop (and counted) only if they run out. */
let proofs: string[] = [];
const makeProof = () => syncProof(key, 'GET', `${ORIGIN}/notes`, secrets.token);
function prepareProofs(count: number): void {
  proofs = Array.from({ length: count }, makeProof);
}
const viaDpop = async () => {
  const proof = proofs.pop() ?? makeProof();
  const verified = await library.authorize(request(`DPoP ${secrets.token}`, proof));
  if (verified.jkt !== key.jkt) throw new Error('library returned another key');
};
const viaBearer = async () => {
  const verified = await library.authorize(request(`Bearer ${secrets.bearerToken}`));
  if (verified.token !== secrets.bearerToken) throw new Error('library returned another token');
};
const proofOnly = async () => {
  if (makeProof().length === 0) throw new Error('no proof');
};

// The floor: the token's signature and one proof's, each with synchronous node:crypto alone.
const jwksResponse = await httpsRequest(jwksUri, { ca });
const tokenKid = (
  JSON.parse(Buffer.from(secrets.token.split('.')[0] ?? '', 'base64url').toString('utf8')) as {
    kid?: string;
  }
).kid;
const tokenJwk = (JSON.parse(jwksResponse.body) as { keys: Array<JsonWebKey & { kid?: string }> }).keys.find(
  (candidate) => candidate.kid === tokenKid,
);
if (tokenJwk === undefined) throw new Error('the DPoP token is not under a JWKS key');
const tokenKey = createPublicKey({ key: tokenJwk, format: 'jwk' });
const proofKey = createPublicKey({ key: jwk, format: 'jwk' });
const tokenSignature = bareCheck('ES256', secrets.token, tokenKey);
const proofSignature = bareCheck('ES256', makeProof(), proofKey);
const floor = async () => {
  if (!tokenSignature() || !proofSignature()) throw new Error('signature did not verify');
};
// The decoded floor: the token and each new proof taken apart and checked, claims parsed, and ath.
const decodedRequest = decodedDpopCheck(
  secrets.token,
  decodedCheck('ES256', tokenKey),
  decodedCheck('ES256', proofKey),
  createHash('sha256').update(secrets.token).digest('base64url'),
);
const decodedFloor = async () => {
  if (!decodedRequest(proofs.pop() ?? makeProof())) throw new Error('signature did not verify');
};

interface Tally {
  count: number;
  wall: number;
  cpu: number;
}
const tally = (): Tally => ({ count: 0, wall: 0, cpu: 0 });

async function round(validate: () => Promise<void>, seconds: number, into: Tally): Promise<void> {
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  const deadline = Date.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < deadline) {
        await validate();
        into.count++;
      }
    }),
  );
  into.wall += Number(process.hrtime.bigint() - start) / 1e9;
  const used = process.cpuUsage(cpu);
  into.cpu += (used.user + used.system) / 1e6;
}

// Enough proofs for a round at twice the rate the warm-up reached.
let warmupRate = 0;
async function withProofs(validate: () => Promise<void>, seconds: number, into: Tally): Promise<void> {
  prepareProofs(Math.ceil(Math.max(warmupRate, 1000) * 2 * seconds));
  await round(validate, seconds, into);
  proofs = [];
}

// Warm-up: the first call fetches the JWKS; every path gets its code optimised.
const warmup = tally();
prepareProofs(20_000);
await round(viaDpop, 0.5, warmup);
proofs = [];
warmupRate = warmup.count / warmup.wall;
await round(viaBearer, 0.5, tally());
await round(proofOnly, 0.25, tally());
await round(floor, 0.25, tally());
await withProofs(decodedFloor, 0.25, tally());
const tallies = { dpop: tally(), bearer: tally(), proofOnly: tally(), floor: tally(), decoded: tally() };
for (let i = 0; i < rounds; i++) {
  await withProofs(viaDpop, slice, tallies.dpop);
  await round(viaBearer, slice, tallies.bearer);
  await round(proofOnly, slice / 2, tallies.proofOnly);
  await round(floor, slice / 2, tallies.floor);
  await withProofs(decodedFloor, slice / 2, tallies.decoded);
}
library.close();
const summary = (t: Tally) => ({
  perSecond: t.count / t.wall,
  cpu: t.cpu / t.wall,
  perCpuSecond: t.count / t.cpu,
  count: t.count,
  seconds: t.wall,
});
process.stdout.write(
  JSON.stringify({
    dpop: summary(tallies.dpop),
    bearer: summary(tallies.bearer),
    proofOnly: summary(tallies.proofOnly),
    floor: summary(tallies.floor),
    decoded: summary(tallies.decoded),
    concurrency,
  }) + '\n',
);
