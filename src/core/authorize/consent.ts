import { randomUUID } from 'node:crypto';
import { ADMIN_SCOPE, scopeForUser } from '../scopes/admin-scope.js';
import { isGrantLive } from '../grants/liveness.js';
import type { Client, Grant } from '../model.js';
import type { ClientStore, GrantStore, UserStore } from '../ports.js';
import { isSubset } from '../scopes/scopes.js';

/** The lifetimes the consent page offers, in seconds; null is "until I revoke it". */
export const GRANT_LIFETIMES: readonly (number | null)[] = [3600, 86400, 30 * 86400, null];

/** What the user decided on the consent page. */
export interface ConsentDecision {
  /** The scopes left ticked: a subset of the request's. */
  scope: string[];
  /** Seconds the grant lasts, or null for "until I revoke it". */
  lifetime: number | null;
}

/** The grant a consent made or confirmed, and whether it is new (a standing one may answer instead). */
export interface RecordedConsent {
  grant: Grant;
  created: boolean;
  /** What the user allowed: the decision's scope, less what the user may not have (decision 29). */
  scope: string[];
}

/**
 * Records a user's consent to `clientId` for `requested` as a grant: the one decision rule of every
 * consent page (the authorization endpoint's and the device grant's). The newest decision is the one
 * that stands: an older grant of the same client keeping something the user has now unticked, or
 * allowed for longer than now chosen, is revoked. Older grants it does not overrule stay, so allowing
 * an app again (on a second device, or because the page is shown every time) does not end the access
 * given before; and a standing grant "until I revoke it" that already allows all of it answers, so a
 * client asked every time does not pile up grants that never end.
 */
export async function recordConsent(
  storage: {
    readonly grants: Pick<GrantStore, 'listByUser' | 'revoke' | 'insert'>;
    readonly clients: Pick<ClientStore, 'recordFirstGrant'>;
    readonly users: Pick<UserStore, 'get'>;
  },
  input: { client: Client; userId: string; requested: readonly string[]; decision: ConsentDecision },
  now: number,
): Promise<RecordedConsent> {
  const { grants } = storage;
  const { client, userId } = input;
  let { requested, decision } = input;
  // Decision 29: `admin` is never offered to a user who is not an administrator, and a form that
  // ticks it anyway (forged, or shown before the role was taken away) does not grant it.
  if (requested.includes(ADMIN_SCOPE) || decision.scope.includes(ADMIN_SCOPE)) {
    const user = await storage.users.get(userId);
    requested = scopeForUser(requested, user);
    decision = { ...decision, scope: scopeForUser(decision.scope, user) };
  }
  const clientId = client.id;
  // The consent page may only narrow what was asked for (RFC 6749 §3.3: the user chooses what they grant).
  if (!isSubset(decision.scope, requested)) throw new Error('consent widened the requested scope');
  if (!GRANT_LIFETIMES.includes(decision.lifetime)) throw new Error('unknown grant lifetime');
  const expiresAt = decision.lifetime === null ? null : now + decision.lifetime;
  const previous = (await grants.listByUser(userId)).filter(
    (other) => other.clientId === clientId && isGrantLive(other, now),
  );
  const refused = requested.filter((name) => !decision.scope.includes(name));
  const overruled = (other: Grant): boolean =>
    other.scope.some((name) => refused.includes(name)) ||
    (expiresAt !== null && (other.expiresAt === null || other.expiresAt > expiresAt));
  for (const other of previous) {
    if (overruled(other)) await grants.revoke(other.id, now);
  }
  if (expiresAt === null) {
    const standing = previous.find(
      (other) => other.expiresAt === null && !overruled(other) && isSubset(decision.scope, other.scope),
    );
    if (standing !== undefined) return { grant: standing, created: false, scope: decision.scope };
  }
  const grant: Grant = {
    id: randomUUID(),
    clientId,
    userId,
    scope: decision.scope,
    createdAt: now,
    expiresAt,
    revokedAt: null,
  };
  await grants.insert(grant);
  // An anonymous registration that someone granted something is in use: the purge keeps it (core/ops/purge.ts).
  if (client.registration === 'open' && client.firstGrantedAt === null) {
    await storage.clients.recordFirstGrant(client.id, now);
  }
  return { grant, created: true, scope: decision.scope };
}
