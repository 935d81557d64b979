import type { Grant } from '../model.js';

/** Where a grant stands at a time: the one rule every reader of grants applies. */
export type GrantState = 'live' | 'revoked' | 'expired';

/**
 * A grant stands until it is revoked or until the end of the lifetime the user chose (expiresAt,
 * null for "until I revoke it"); it bounds every token issued under it (docs/architecture.md).
 */
export function grantState(grant: Grant, now: number): GrantState {
  if (grant.revokedAt !== null) return 'revoked';
  if (grant.expiresAt !== null && grant.expiresAt <= now) return 'expired';
  return 'live';
}

export function isGrantLive(grant: Grant, now: number): boolean {
  return grantState(grant, now) === 'live';
}
