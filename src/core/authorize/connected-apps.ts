import type { AuditLog } from '../audit/audit-log.js';
import type { Clock } from '../../shared/clock.js';
import type { Storage } from '../ports.js';
import { clientHostField } from '../clients/metadata-documents.js';

type AppStorage = Pick<Storage, 'grants' | 'clients'>;
import { isGrantLive } from '../grants/liveness.js';

/** One client a user has granted access to, as the connected-apps page shows it. */
export interface ConnectedApp {
  clientId: string;
  clientName: string;
  /** The host of its Client ID Metadata Document (decision 46), shown beside the name; absent for others. */
  clientHost?: string;
  scope: string[];
  /** When the user first granted what is still live. */
  grantedAt: number;
  /** When the access ends; null means "until you revoke it". */
  validUntil: number | null;
}

/** The clients a user has live grants to, one entry per client, most recently granted first. */
export async function listConnectedApps(
  storage: AppStorage,
  clock: Clock,
  userId: string,
): Promise<ConnectedApp[]> {
  const now = clock.now();
  const byClient = new Map<string, ConnectedApp>();
  for (const grant of await storage.grants.listByUser(userId)) {
    if (!isGrantLive(grant, now)) continue;
    const entry = byClient.get(grant.clientId);
    if (entry === undefined) {
      const client = await storage.clients.get(grant.clientId);
      byClient.set(grant.clientId, {
        clientId: grant.clientId,
        clientName: client?.name ?? grant.clientId,
        ...(client === undefined ? {} : clientHostField(client)),
        scope: [...grant.scope],
        grantedAt: grant.createdAt,
        validUntil: grant.expiresAt,
      });
      continue;
    }
    // Several live grants (password logins beside a consent): show what they allow together.
    entry.scope = [...new Set([...entry.scope, ...grant.scope])];
    entry.grantedAt = Math.min(entry.grantedAt, grant.createdAt);
    entry.validUntil =
      entry.validUntil === null || grant.expiresAt === null
        ? null
        : Math.max(entry.validUntil, grant.expiresAt);
  }
  return [...byClient.values()];
}

/**
 * Revokes every live grant of the user to the client. GrantStore.revoke retires the refresh tokens;
 * access tokens carry the grant id, so introspection and resource servers refuse them from now on.
 */
export async function revokeConnectedApp(
  storage: AppStorage,
  clock: Clock,
  userId: string,
  clientId: string,
): Promise<number> {
  const now = clock.now();
  let revoked = 0;
  for (const grant of await storage.grants.listByUser(userId)) {
    if (grant.clientId !== clientId || !isGrantLive(grant, now)) continue;
    if (await storage.grants.revoke(grant.id, now)) revoked += 1;
  }
  return revoked;
}

/** The connected-apps page's reads and its revocation, for one store and clock. */
export class ConnectedApps {
  constructor(
    private readonly storage: AppStorage,
    private readonly clock: Clock,
    /** Where a user's revocation is recorded, with the revocation (decision 41). */
    private readonly audit?: AuditLog,
  ) {}

  list(userId: string): Promise<ConnectedApp[]> {
    return listConnectedApps(this.storage, this.clock, userId);
  }

  /** Revokes the user's live grants to the client; returns how many. */
  revoke(userId: string, clientId: string, address: string | null = null): Promise<number> {
    if (this.audit === undefined) return revokeConnectedApp(this.storage, this.clock, userId, clientId);
    return this.audit.change({ actor: { type: 'user', id: userId }, address }, async (storage, record) => {
      const revoked = await revokeConnectedApp(storage, this.clock, userId, clientId);
      if (revoked > 0) {
        await record({ type: 'grant.revoked', userId, clientId, detail: `by the user: ${revoked} grant(s)` });
      }
      return revoked;
    });
  }
}
