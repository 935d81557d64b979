import { viewGrant, type GrantOwner } from '../../../../core/grants/grant-registry.js';
import type { Grant } from '../../../../core/model.js';
import type { ApiContext } from '../context.js';
import type { AuditContext } from '../../../../core/audit/audit-log.js';
import { notFound } from '../problem.js';

/**
 * The grants sub-collections hold standing grants only (GrantRegistry): revoking one (DELETE) takes it
 * out of the collection, as does its end of life, so a revoked grant answers 404 like any deleted
 * resource.
 */
export function listGrants(grants: Grant[]) {
  return { items: grants.map(viewGrant) };
}

/** Revokes one standing grant of a client or user; any other grant id is not found. */
export async function revokeGrantOf(
  context: ApiContext,
  owner: GrantOwner,
  grantId: string,
  audit: AuditContext,
): Promise<void> {
  if (!(await context.engine.grants.revokeStanding(grantId, owner, audit)))
    throw notFound('grant', 'grantId');
}
