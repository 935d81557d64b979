import { invalidGrant } from '../errors.js';
import type { Grant } from '../model.js';
import type { Storage } from '../ports.js';

/** The grant, if it still stands: not revoked and inside the lifetime the user chose. */
export async function liveGrant(storage: Storage, grantId: string, now: number): Promise<Grant> {
  const grant = await storage.grants.get(grantId);
  if (grant === undefined || grant.revokedAt !== null) throw invalidGrant('the grant was revoked');
  if (grant.expiresAt !== null && grant.expiresAt <= now) throw invalidGrant('the grant has expired');
  return grant;
}
