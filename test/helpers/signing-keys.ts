import { deriveServerKeys } from '../../src/compose/engine-policy.js';
import {
  newKeyPair,
  signingKeyRecord,
  type KeyPair,
  type SigningAlgorithm,
} from '../../src/core/keys/key-ring.js';
import type { SigningKeyStore } from '../../src/core/ports.js';

/**
 * One key pair per algorithm for the whole test process, made by the server's own newKeyPair the first
 * time a test asks: an RSA-2048 key takes one to two seconds of CPU on a busy machine, and every test
 * engine and test server would otherwise make three keys in prepare().
 */
const pairs = new Map<SigningAlgorithm, Promise<KeyPair>>();

function pairFor(alg: SigningAlgorithm): Promise<KeyPair> {
  let pair = pairs.get(alg);
  if (pair === undefined) {
    pair = newKeyPair(alg);
    pairs.set(alg, pair);
  }
  return pair;
}

/**
 * Gives a new store the active signing keys a server's first start would make (KeyRing.init on an empty
 * store: one active key per algorithm of the ring, the access tokens' and RS256 and ES256), from this
 * process's fixed key pairs, sealed under the key-encryption key of `secret`. prepare() then loads them
 * and generates none. A store that already has keys is left alone.
 *
 * Every server and engine of one test process thus has the same first keys (the same kids). Tests about
 * key generation, rotation or revocation are unaffected: rotate() and revoke() make real new keys, and
 * test/unit/key-ring.test.ts drives KeyRing on stores of its own. A test that needs two servers with
 * different keys rotates one of them.
 */
export async function seedSigningKeys(
  store: SigningKeyStore,
  options: { secret: Buffer; algorithm: SigningAlgorithm; now: number },
): Promise<void> {
  if ((await store.list()).length > 0) return;
  const { keyEncryptionKey } = deriveServerKeys(options.secret);
  // The ring's algorithms (key-ring.ts, ringAlgorithms); were one missing, init() would make it.
  const algorithms = [...new Set<SigningAlgorithm>([options.algorithm, 'RS256', 'ES256'])];
  for (const alg of algorithms) {
    await store.insert(await signingKeyRecord(alg, await pairFor(alg), keyEncryptionKey, options.now));
  }
}
