import { isoTime, type Clock } from '../../shared/clock.js';
import { isGrantLive } from './liveness.js';
import type { Grant } from '../model.js';
import type { GrantOwnerFilter, Storage } from '../ports.js';
import { AuditLog, UNATTRIBUTED, type AuditContext } from '../audit/audit-log.js';

/** A grant as operators see it, on the command line and in /v1. */
export interface GrantView {
  id: string;
  client_id: string;
  user_id: string;
  scopes: string[];
  created_at: string;
  expires_at: string | null;
}

export function viewGrant(grant: Grant): GrantView {
  return {
    id: grant.id,
    client_id: grant.clientId,
    user_id: grant.userId,
    scopes: grant.scope,
    created_at: isoTime(grant.createdAt),
    expires_at: grant.expiresAt === null ? null : isoTime(grant.expiresAt),
  };
}

/** Whose grant an operator names: a grant of another client or user is not found. */
export interface GrantOwner {
  clientId?: string;
  userId?: string;
}

/**
 * The grants operators see and revoke: standing ones only (isGrantLive). A revoked or expired grant is
 * out of the collection, as a deleted resource would be.
 */
export class GrantRegistry {
  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    /** Every revocation is recorded, in its own transaction (decision 41). */
    private readonly audit: AuditLog = new AuditLog(storage, clock),
  ) {}

  async standingOfClient(clientId: string): Promise<Grant[]> {
    return this.standing(await this.storage.grants.listByClient(clientId));
  }

  async standingOfUser(userId: string): Promise<Grant[]> {
    return this.standing(await this.storage.grants.listByUser(userId));
  }

  /** One page of a client's or a user's standing grants, newest first, and how many there are. */
  pageOf(owner: GrantOwnerFilter, limit: number, offset: number): Promise<{ items: Grant[]; total: number }> {
    return this.storage.grants.pageStanding(owner, this.clock.now(), limit, offset);
  }

  /**
   * Revokes one standing grant (of `owner`, when given): the grant and its refresh tokens are retired
   * in one transaction, and every access token carrying its id fails validation from then on. False
   * when there is no such standing grant.
   */
  async revokeStanding(
    grantId: string,
    owner: GrantOwner = {},
    context: AuditContext = UNATTRIBUTED,
  ): Promise<boolean> {
    const grant = await this.storage.grants.get(grantId);
    const now = this.clock.now();
    if (
      grant === undefined ||
      !isGrantLive(grant, now) ||
      (owner.clientId !== undefined && grant.clientId !== owner.clientId) ||
      (owner.userId !== undefined && grant.userId !== owner.userId)
    ) {
      return false;
    }
    return this.audit.change(context, async (storage, record) => {
      if (!(await storage.grants.revoke(grant.id, now))) return false;
      await record({
        type: 'grant.revoked',
        userId: grant.userId,
        clientId: grant.clientId,
        before: viewGrant(grant),
      });
      return true;
    });
  }

  private standing(grants: Grant[]): Grant[] {
    const now = this.clock.now();
    return grants.filter((grant) => isGrantLive(grant, now));
  }
}
