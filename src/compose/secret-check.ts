import { opensSigningKey } from '../core/keys/key-ring.js';
import type { GatehouseStore } from '../core/ports.js';
import type { Clock } from '../shared/clock.js';
import { deriveKey, safeEqual } from '../shared/crypto.js';
import { SecretMismatchError, StoreStateError } from './store-errors.js';

// The errors live apart so the command line can name them without loading the key ring.
export { SecretMismatchError, StoreStateError };

/**
 * The server secret and the store must belong together: the signing keys are sealed under a key
 * derived from the secret. A process or command started with another secret must stop before it
 * writes anything (a key it rotated in, or a first key, would be one the deployment cannot open).
 * The store keeps a value derived from the secret (HKDF, one-way: it reveals nothing of the secret)
 * to compare against (StoreLifecycle.secretCheck); a store made before that value existed is checked
 * by unsealing its active signing key, and then gets the value.
 */

function checkValue(secret: Buffer): string {
  return deriveKey(secret, 'server-secret-check').toString('base64url');
}

/** How the secret was found to belong to the store. */
export type SecretVerdict = 'check-value' | 'signing-key' | 'new-store';

/**
 * Throws SecretMismatchError when `secret` is not the store's; writes nothing. Works on a store at any
 * migration level, so it runs before migrations are applied.
 */
export async function verifyServerSecret(storage: GatehouseStore, secret: Buffer): Promise<SecretVerdict> {
  const stored = await storage.secretCheck.read();
  if (stored !== undefined) {
    if (!safeEqual(stored, checkValue(secret))) throw new SecretMismatchError();
    return 'check-value';
  }
  if (await storage.exists()) {
    const keys = await storage.signingKeys.list();
    // The key processes sign with (as KeyRing chooses it): the one that must open.
    const active = keys.find((key) => key.retiredAt === null) ?? keys[0];
    if (active !== undefined) {
      if (!opensSigningKey(active, deriveKey(secret, 'signing-key-encryption'))) {
        throw new SecretMismatchError();
      }
      return 'signing-key';
    }
  }
  return 'new-store';
}

/**
 * Stores the check value when the store has none yet (after verifyServerSecret and migrations). Reads
 * it back, so of two first starts with different secrets racing on an empty store, one is refused.
 */
export async function recordServerSecretCheck(
  storage: GatehouseStore,
  secret: Buffer,
  clock: Clock,
): Promise<void> {
  const stored = await storage.secretCheck.write(checkValue(secret), clock.now());
  if (stored === undefined || !safeEqual(stored, checkValue(secret))) throw new SecretMismatchError();
}

/** serve, init and migrate: verify the secret, then apply migrations, then record the check value. */
export async function migrateVerified(
  storage: GatehouseStore,
  secret: Buffer,
  clock: Clock,
): Promise<string[]> {
  await verifyServerSecret(storage, secret);
  const applied = await storage.migrate();
  await recordServerSecretCheck(storage, secret, clock);
  return applied;
}

/**
 * Every other command: the store must exist and be current (a newer CLI never upgrades a deployment's
 * schema on its own), and the secret must be its secret.
 */
export async function openExistingVerified(
  storage: GatehouseStore,
  secret: Buffer,
  clock: Clock,
): Promise<void> {
  if (!(await storage.exists())) {
    throw new StoreStateError(
      'store_missing',
      'no Gatehouse store in this database: run "gatehouse init" to create one (or check --database-url)',
    );
  }
  const pending = await storage.pendingMigrations();
  if (pending.length > 0) {
    throw new StoreStateError(
      'migrations_pending',
      `the database schema is not current (pending: ${pending.join(', ')}): run "gatehouse migrate" first`,
    );
  }
  if ((await verifyServerSecret(storage, secret)) !== 'check-value') {
    await recordServerSecretCheck(storage, secret, clock);
  }
}
