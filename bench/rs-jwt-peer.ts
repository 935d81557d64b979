/**
 * The resource-server benchmark's loop (issue 5 §6: JWT validation in the library, per core). Validates
 * one real Gatehouse-issued token again and again with the library's ResourceServer (JWKS fetched once
 * from the running Gatehouse, then cached by jose), and with jose's `jwtVerify` alone on the same token
 * and key (the peer), in interleaved rounds, `--concurrency` validations in flight. Run pinned to one
 * core; prints one JSON line with validations per wall second and per CPU second of each path.
 */
import { createPublicKey, verify, type JsonWebKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import { ResourceServer, type RequestInfo } from '../src/resource-server/index.js';
import { httpsRequest } from './lib/https.js';

const { values } = parseArgs({
  options: {
    issuer: { type: 'string' },
    'jwks-uri': { type: 'string' },
    'ca-file': { type: 'string' },
    'token-file': { type: 'string' },
    seconds: { type: 'string', default: '10' },
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
// Read from a file, not the command line, so the token never shows in a process listing.
const token = readFileSync(required('token-file'), 'utf8').trim();
const rounds = Number(values.rounds);
// The library and jose get equal slices, the signature-only floor half as much.
const slice = Number(values.seconds) / rounds / 2.5;
const concurrency = Number(values.concurrency);

// Judged with the validated-token cache off: every validation verifies the signature, as for a token
// never seen before. The cached path (the same token again, the common case) is measured beside it.
const library = new ResourceServer({ issuer, jwksUri, ca, verifiedTokenCacheSize: 0 });
const cachedLibrary = new ResourceServer({ issuer, jwksUri, ca });
const request: RequestInfo = {
  method: 'GET',
  url: '/notes',
  host: 'api.bench.test',
  protocol: 'https',
  authorization: `Bearer ${token}`,
};
const viaLibrary = async () => {
  const verified = await library.authorize(request);
  if (verified.token !== token) throw new Error('library returned another token');
};
const viaCachedLibrary = async () => {
  const verified = await cachedLibrary.authorize(request);
  if (verified.token !== token) throw new Error('library returned another token');
};

// The peer: the same checks jose can make alone (RFC 9068 typ, iss, aud, alg allow-list), on a key set
// built once from the same JWKS.
const jwksResponse = await fetchJwks();
const keySet = createLocalJWKSet(jwksResponse);
const viaJose = async () => {
  await jwtVerify(token, keySet, {
    issuer,
    audience: issuer,
    algorithms: ['ES256', 'EdDSA'],
    typ: 'at+jwt',
  });
};

// The floor: the ES256 signature check alone, synchronous node:crypto, no JOSE or claims processing.
const { kid } = decodeProtectedHeader(token);
const jwk = jwksResponse.keys.find((key) => key.kid === kid);
if (jwk === undefined || jwk.crv !== 'P-256') throw new Error('the token is not ES256 under a JWKS key');
const publicKey = createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' });
const dot = token.lastIndexOf('.');
const signingInput = Buffer.from(token.slice(0, dot));
const signature = Buffer.from(token.slice(dot + 1), 'base64url');
const viaNodeCrypto = async () => {
  if (!verify('sha256', signingInput, { key: publicKey, dsaEncoding: 'ieee-p1363' }, signature)) {
    throw new Error('signature did not verify');
  }
};

async function fetchJwks(): Promise<JSONWebKeySet> {
  const response = await httpsRequest(jwksUri, { ca });
  if (response.status !== 200) throw new Error(`${jwksUri} answered ${response.status}`);
  return JSON.parse(response.body) as JSONWebKeySet;
}

interface Tally {
  count: number;
  wall: number;
  cpu: number;
}

async function round(validate: () => Promise<void>, seconds: number, tally: Tally): Promise<void> {
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  const deadline = Date.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < deadline) {
        await validate();
        tally.count++;
      }
    }),
  );
  tally.wall += Number(process.hrtime.bigint() - start) / 1e9;
  const used = process.cpuUsage(cpu);
  tally.cpu += (used.user + used.system) / 1e6;
}

// Warm-up: the library's first call fetches the JWKS; both paths get their code optimised.
await round(viaLibrary, 1, { count: 0, wall: 0, cpu: 0 });
await round(viaJose, 1, { count: 0, wall: 0, cpu: 0 });
await round(viaNodeCrypto, 1, { count: 0, wall: 0, cpu: 0 });
await round(viaCachedLibrary, 1, { count: 0, wall: 0, cpu: 0 });
const cachedTally: Tally = { count: 0, wall: 0, cpu: 0 };
const lib: Tally = { count: 0, wall: 0, cpu: 0 };
const peer: Tally = { count: 0, wall: 0, cpu: 0 };
const floor: Tally = { count: 0, wall: 0, cpu: 0 };
for (let i = 0; i < rounds; i++) {
  await round(viaLibrary, slice, lib);
  await round(viaJose, slice, peer);
  // A shorter slice: only a reference, not what is judged.
  await round(viaNodeCrypto, slice / 2, floor);
  await round(viaCachedLibrary, slice / 2, cachedTally);
}
library.close();
cachedLibrary.close();
const summary = (t: Tally) => ({
  perSecond: t.count / t.wall,
  cpu: t.cpu / t.wall,
  perCpuSecond: t.count / t.cpu,
  count: t.count,
});
process.stdout.write(
  JSON.stringify({
    library: summary(lib),
    jose: summary(peer),
    nodeCrypto: summary(floor),
    cachedLibrary: summary(cachedTally),
    concurrency,
  }) + '\n',
);
