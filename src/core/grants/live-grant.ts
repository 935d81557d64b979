import { invalidGrant } from '../errors.js';
import type { Grant } from '../model.js';
import type { Storage } from '../ports.js';

/** The grant, if it still stands: not revoked and inside the lifetime the user chose. */
export async function liveGrant(storage: Storage, grantId: string, now: number): Promise<Grant> {
  return assertLiveGrant(await storage.grants.get(grantId), now);
}

/** The same check on a grant already read (with the code that names it). */
export function assertLiveGrant(grant: Grant | undefined, now: number): Grant {
  if (grant === undefined || grant.revokedAt !== null) throw invalidGrant('the grant was revoked');
  if (grant.expiresAt !== null && grant.expiresAt <= now) throw invalidGrant('the grant has expired');
  return grant;
}
