/**
 * The CPU one access-token signature costs, measured on the servers' core in the bench run (issue 17:
 * Gatehouse's CPU per request is budgeted as bare Fastify's plus one signature). The algorithm is the
 * one Gatehouse signs access tokens with in this run (GATEHOUSE_SIGNING_ALG, ES256 by default, see
 * src/config.ts); the payload is a client_credentials token's (RFC 9068), signed as KeyRing does it:
 * synchronous node:crypto sign of the JWS signing input (src/core/keys/key-ring.ts).
 *
 *   node sign-cost.js --seconds S    (prints one JSON line)
 */
import { generateKeyPairSync, randomUUID, sign, type KeyObject } from 'node:crypto';
import { tmpdir } from 'node:os';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.js';
import type { SigningAlgorithm } from '../src/core/keys/key-ring.js';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '1' } } });
const seconds = Number(values.seconds);

const algorithm: SigningAlgorithm = loadConfig(
  { dataDir: tmpdir(), secret: Buffer.alloc(32, 1) },
  { GATEHOUSE_SIGNING_ALG: process.env.GATEHOUSE_SIGNING_ALG },
).signingAlgorithm;

function privateKeyFor(alg: SigningAlgorithm): KeyObject {
  switch (alg) {
    case 'ES256':
      return generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    case 'RS256':
      return generateKeyPairSync('rsa', { modulusLength: 2048, publicExponent: 0x10001 }).privateKey;
    case 'EdDSA':
      return generateKeyPairSync('ed25519').privateKey;
  }
}

/** RFC 7518 §3: the hash and signature encoding per algorithm, as KeyRing's signer. */
function signerFor(alg: SigningAlgorithm, key: KeyObject): (input: Buffer) => Buffer {
  switch (alg) {
    case 'ES256':
      return (input) => sign('sha256', input, { key, dsaEncoding: 'ieee-p1363' });
    case 'RS256':
      return (input) => sign('sha256', input, key);
    case 'EdDSA':
      return (input) => sign(null, input, key);
  }
}

const now = Math.floor(Date.now() / 1000);
const encode = (part: object) => Buffer.from(JSON.stringify(part)).toString('base64url');
const signingInput = Buffer.from(
  `${encode({ alg: algorithm, typ: 'at+jwt', kid: 'x'.repeat(43) })}.${encode({
    iss: 'https://localhost:8443',
    sub: randomUUID(),
    aud: 'https://localhost:8443',
    client_id: randomUUID(),
    scope: '',
    iat: now,
    exp: now + 3600,
    jti: randomUUID(),
  })}`,
);
const signOnce = signerFor(algorithm, privateKeyFor(algorithm));

// Warm-up (JIT, OpenSSL's first-use set-up), then batches until `seconds` of wall time have passed.
for (let i = 0; i < 200; i++) signOnce(signingInput);
const BATCH = 200;
const cpuBefore = process.cpuUsage();
const wallBefore = process.hrtime.bigint();
let count = 0;
let wall: number;
do {
  for (let i = 0; i < BATCH; i++) signOnce(signingInput);
  count += BATCH;
  wall = Number(process.hrtime.bigint() - wallBefore) / 1e9;
} while (wall < seconds);
const used = process.cpuUsage(cpuBefore);
const cpuSeconds = (used.user + used.system) / 1e6;
process.stdout.write(
  JSON.stringify({
    algorithm,
    count,
    seconds: wall,
    cpuSeconds,
    cpuUsPerSignature: (cpuSeconds / count) * 1e6,
  }) + '\n',
);
