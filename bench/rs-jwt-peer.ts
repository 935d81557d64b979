/**
 * The resource-server benchmark's loop (target: JWT validation in the library, per core). For each
 * algorithm Gatehouse signs with, validates one token again and again with the library's
 * ResourceServer (validated-token cache off: every validation verifies the signature), with jose's
 * `jwtVerify` alone on the same token and key (the peer), with the bare signature check of
 * synchronous node:crypto (the floor), and with that check on parts taken from the token on every call,
 * its claims parsed (the decoded floor, bench/lib/jws-floor.ts), in interleaved rounds,
 * `--concurrency` validations in flight.
 *
 * ES256 (Gatehouse's default, the one judged): a real token from the running Gatehouse, its JWKS
 * fetched over HTTPS. RS256 and EdDSA: the same claims signed by Gatehouse's own KeyRing with a fresh
 * key of that algorithm (2048-bit RSA, Ed25519), its JWKS handed to the library in-process. Run pinned
 * to one core; prints one JSON line with validations per wall second and per CPU second of each path.
 */
import { createPublicKey, type JsonWebKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import { KeyRing, type SigningAlgorithm } from '../src/core/keys/key-ring.js';
import type { SigningKeyRecord } from '../src/core/model.js';
import { ResourceServer, type FetchLike, type RequestInfo } from 'gatehouse-oauth-resource-server';
import { systemClock } from '../src/shared/clock.js';
import { httpsRequest } from './lib/https.js';
import { bareCheck, decodedCheck } from './lib/jws-floor.js';

const { values } = parseArgs({
  options: {
    issuer: { type: 'string' },
    'jwks-uri': { type: 'string' },
    'ca-file': { type: 'string' },
    'token-file': { type: 'string' },
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
// Read from a file, not the command line, so the token never shows in a process listing.
const gatehouseToken = readFileSync(required('token-file'), 'utf8').trim();
const rounds = Number(values.rounds);
const concurrency = Number(values.concurrency);
const ALGORITHMS = ['ES256', 'RS256', 'EdDSA'] as const satisfies readonly SigningAlgorithm[];
// Per round and algorithm: library and jose get a slice each, the bare and the decoded floor half of
// one each; plus half a slice for the cached library (ES256).
const slice = Number(values.seconds) / rounds / (ALGORITHMS.length * 3 + 0.5);

const request = (token: string): RequestInfo => ({
  method: 'GET',
  url: '/notes',
  host: 'api.bench.test',
  protocol: 'https',
  authorization: `Bearer ${token}`,
});

interface Subject {
  token: string;
  jwks: JSONWebKeySet;
  /** How the library gets the JWKS: over HTTPS from Gatehouse, or in-process. */
  libraryOptions: { jwksUri: string; ca?: string; fetch?: FetchLike };
}

/** ES256: the Gatehouse-issued token and Gatehouse's /jwks. */
async function gatehouseSubject(): Promise<Subject> {
  const response = await httpsRequest(jwksUri, { ca });
  if (response.status !== 200) throw new Error(`${jwksUri} answered ${response.status}`);
  const jwks = JSON.parse(response.body) as JSONWebKeySet;
  return { token: gatehouseToken, jwks, libraryOptions: { jwksUri, ca } };
}

/** The Gatehouse token's claims signed by Gatehouse's KeyRing with a new key of `alg`. */
async function keyRingSubject(alg: SigningAlgorithm): Promise<Subject> {
  const records: SigningKeyRecord[] = [];
  const keyRing = new KeyRing({
    store: {
      insert: async (record) => void records.unshift(record),
      list: async () => [...records],
      retireAllExcept: async () => undefined,
      revoke: async () => false,
    },
    keyEncryptionKey: Buffer.alloc(32, 1),
    clock: systemClock,
    algorithm: alg,
    retiredKeyRetentionSeconds: 3600,
    refreshIntervalSeconds: 3600,
  });
  await keyRing.init();
  const claims = JSON.parse(Buffer.from(gatehouseToken.split('.')[1] ?? '', 'base64url').toString('utf8'));
  const token = keyRing.signJwt(claims as Record<string, unknown>);
  const jwks = (await keyRing.publicJwks()) as JSONWebKeySet;
  const body = JSON.stringify(jwks);
  const fetch: FetchLike = async () =>
    new Response(body, { status: 200, headers: { 'content-type': 'application/json' } });
  return { token, jwks, libraryOptions: { jwksUri: 'https://jwks.bench.test/jwks', fetch } };
}

interface Case {
  alg: SigningAlgorithm;
  library: () => Promise<void>;
  jose: () => Promise<void>;
  nodeCrypto: () => Promise<void>;
  decoded: () => Promise<void>;
  close(): void;
}

function makeCase(alg: SigningAlgorithm, subject: Subject): Case {
  const { token, jwks } = subject;
  // Judged with the validated-token cache off: every validation verifies the signature, as for a token
  // never seen before.
  const library = new ResourceServer({ issuer, ...subject.libraryOptions, verifiedTokenCacheSize: 0 });
  const libraryRequest = request(token);
  // The peer: the same checks jose can make alone (RFC 9068 typ, iss, aud, alg allow-list), on a key
  // set built once from the same JWKS.
  const keySet = createLocalJWKSet(jwks);
  // The floor: the signature check alone, synchronous node:crypto, no JOSE or claims processing.
  const { kid } = decodeProtectedHeader(token);
  const jwk = jwks.keys.find((key) => key.kid === kid);
  if (jwk === undefined || jwk.alg !== alg) throw new Error(`the ${alg} token is not under a JWKS key`);
  const publicKey = createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' });
  const check = bareCheck(alg, token, publicKey);
  // The least any validator does per token: the floor on parts taken from the token, claims parsed.
  const decoded = decodedCheck(alg, publicKey);
  return {
    alg,
    async library() {
      const verified = await library.authorize(libraryRequest);
      if (verified.token !== token) throw new Error('library returned another token');
    },
    async jose() {
      await jwtVerify(token, keySet, {
        issuer,
        audience: issuer,
        algorithms: ['ES256', 'EdDSA', 'RS256'],
        typ: 'at+jwt',
      });
    },
    async nodeCrypto() {
      if (!check()) throw new Error('signature did not verify');
    },
    async decoded() {
      if (!decoded(token)) throw new Error('signature did not verify');
    },
    close: () => library.close(),
  };
}

const cases = [makeCase('ES256', await gatehouseSubject())];
for (const alg of ALGORITHMS.slice(1)) cases.push(makeCase(alg, await keyRingSubject(alg)));
if (decodeProtectedHeader(gatehouseToken).alg !== 'ES256') throw new Error('Gatehouse did not sign ES256');

// The cached path (the same token again, the common case), ES256 only: measured beside, not judged.
const cachedLibrary = new ResourceServer({ issuer, jwksUri, ca });
const cachedRequest = request(gatehouseToken);
const viaCachedLibrary = async () => {
  const verified = await cachedLibrary.authorize(cachedRequest);
  if (verified.token !== gatehouseToken) throw new Error('library returned another token');
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

// Warm-up: the library's first call fetches the JWKS; every path gets its code optimised.
for (const one of cases) {
  await round(one.library, 0.5, tally());
  await round(one.jose, 0.5, tally());
  await round(one.nodeCrypto, 0.5, tally());
  await round(one.decoded, 0.5, tally());
}
await round(viaCachedLibrary, 0.5, tally());
const tallies = new Map(
  cases.map(
    (one) => [one.alg, { library: tally(), jose: tally(), nodeCrypto: tally(), decoded: tally() }] as const,
  ),
);
const cachedTally = tally();
for (let i = 0; i < rounds; i++) {
  for (const one of cases) {
    const into = tallies.get(one.alg);
    if (into === undefined) throw new Error('no tally');
    await round(one.library, slice, into.library);
    await round(one.jose, slice, into.jose);
    // A shorter slice: only a reference, not what is judged.
    await round(one.nodeCrypto, slice / 2, into.nodeCrypto);
    await round(one.decoded, slice / 2, into.decoded);
  }
  await round(viaCachedLibrary, slice / 2, cachedTally);
}
for (const one of cases) one.close();
cachedLibrary.close();
const summary = (t: Tally) => ({
  perSecond: t.count / t.wall,
  cpu: t.cpu / t.wall,
  perCpuSecond: t.count / t.cpu,
  count: t.count,
  seconds: t.wall,
});
process.stdout.write(
  JSON.stringify({
    algorithms: Object.fromEntries(
      [...tallies].map(([alg, t]) => [
        alg,
        {
          library: summary(t.library),
          jose: summary(t.jose),
          nodeCrypto: summary(t.nodeCrypto),
          decoded: summary(t.decoded),
        },
      ]),
    ),
    cachedLibrary: summary(cachedTally),
    concurrency,
  }) + '\n',
);
