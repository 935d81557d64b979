import { viewGrant, type GrantOwner } from '../../../../core/grants/grant-registry.js';
import type { ApiContext } from '../context.js';
import type { AuditContext } from '../../../../core/audit/audit-log.js';
import { notFound } from '../problem.js';
import type { GrantOwnerFilter } from '../../../../core/ports.js';

/**
 * The grants sub-collections hold standing grants only (GrantRegistry): revoking one (DELETE) takes it
 * out of the collection, as does its end of life, so a revoked grant answers 404 like any deleted
 * resource.
 */
export async function listGrants(
  context: ApiContext,
  owner: GrantOwnerFilter,
  query: { limit?: number; offset?: number },
) {
  const limit = query.limit ?? 20;
  const offset = query.offset ?? 0;
  const page = await context.engine.grants.pageOf(owner, limit, offset);
  return { items: page.items.map(viewGrant), total: page.total, limit, offset };
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
