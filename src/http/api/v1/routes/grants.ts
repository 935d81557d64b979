import type { Grant } from '../../../../core/model.js';
import type { ApiContext } from '../context.js';
import { isoTime } from '../context.js';
import { notFound } from '../problem.js';

/** A grant as /v1 shows it. */
export function viewGrant(grant: Grant) {
  return {
    id: grant.id,
    client_id: grant.clientId,
    user_id: grant.userId,
    scopes: grant.scope,
    created_at: isoTime(grant.createdAt),
    expires_at: grant.expiresAt === null ? null : isoTime(grant.expiresAt),
  };
}

/**
 * The grants sub-collections hold standing grants only: revoking one (DELETE) takes it out of the
 * collection, as does its end of life, so a revoked grant answers 404 like any deleted resource.
 */
export function isStanding(grant: Grant, now: number): boolean {
  return grant.revokedAt === null && (grant.expiresAt === null || grant.expiresAt > now);
}

export async function listStandingGrants(grants: Grant[], context: ApiContext) {
  const now = context.clock.now();
  return { items: grants.filter((grant) => isStanding(grant, now)).map(viewGrant) };
}

/**
 * Revokes one standing grant of a client or user: the grant and its refresh tokens are retired in
 * one transaction, and every access token carrying its id fails validation from then on.
 */
export async function revokeGrantOf(
  context: ApiContext,
  owner: { clientId?: string; userId?: string },
  grantId: string,
): Promise<void> {
  const grant = await context.storage.grants.get(grantId);
  const now = context.clock.now();
  if (
    grant === undefined ||
    !isStanding(grant, now) ||
    (owner.clientId !== undefined && grant.clientId !== owner.clientId) ||
    (owner.userId !== undefined && grant.userId !== owner.userId)
  ) {
    throw notFound('grant', 'grantId');
  }
  if (!(await context.storage.grants.revoke(grant.id, now))) throw notFound('grant', 'grantId');
}
