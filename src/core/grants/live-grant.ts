import { invalidGrant } from '../errors.js';
import type { Grant } from '../model.js';
import type { GrantStore } from '../ports.js';
import { grantState } from './liveness.js';

/** The grant, if it still stands: not revoked and inside the lifetime the user chose. */
export async function liveGrant(
  storage: { readonly grants: Pick<GrantStore, 'get'> },
  grantId: string,
  now: number,
): Promise<Grant> {
  return assertLiveGrant(await storage.grants.get(grantId), now);
}

/** The same check on a grant already read (with the code that names it). */
export function assertLiveGrant(grant: Grant | undefined, now: number): Grant {
  // A grant that is gone was deleted with its client or user: revoked, as far as its tokens go.
  const state = grant === undefined ? 'revoked' : grantState(grant, now);
  if (state === 'revoked' || grant === undefined) throw invalidGrant('the grant was revoked');
  if (state === 'expired') throw invalidGrant('the grant has expired');
  return grant;
}
