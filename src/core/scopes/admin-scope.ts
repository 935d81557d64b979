import { invalidScope } from '../errors.js';
import type { User } from '../model.js';
import type { UserStore } from '../ports.js';

/** The scope of Gatehouse's own management API (/v1): clients, users, grants and keys. */
export const ADMIN_SCOPE = 'admin';

/**
 * docs/decisions.md, decision 29: a token issued for a user is never worth more than the user. Of
 * `scope`, what a token for `user` may carry: all of it for an administrator, all but `admin` for
 * anyone else (and for a user who no longer exists). A client's own `admin`, through
 * client_credentials, is the client's authority and never passes here.
 */
export function scopeForUser(scope: readonly string[], user: Pick<User, 'admin'> | undefined): string[] {
  if (!scope.includes(ADMIN_SCOPE) || user?.admin === true) return [...scope];
  return scope.filter((name) => name !== ADMIN_SCOPE);
}

/**
 * scopeForUser where a token is issued: RFC 6749 §3.3 lets the server issue less than was asked for
 * (the response's `scope` says what), but a request that asked for nothing but `admin` gets
 * `invalid_scope`, not a token for nothing.
 */
export function requireScopeForUser(
  scope: readonly string[],
  user: Pick<User, 'admin'> | undefined,
): string[] {
  const allowed = scopeForUser(scope, user);
  if (allowed.length === 0 && scope.length > 0) throw adminOnly();
  return allowed;
}

/**
 * requireScopeForUser for the user `userId`, read only when the scope holds `admin`: every other
 * token costs no read.
 */
export async function userScope(
  storage: { readonly users: Pick<UserStore, 'get'> },
  userId: string,
  scope: readonly string[],
): Promise<string[]> {
  if (!scope.includes(ADMIN_SCOPE)) return [...scope];
  return requireScopeForUser(scope, await storage.users.get(userId));
}

/** `invalid_scope` for a request that asked only for what the user may not have. */
export const adminOnly = () => invalidScope(`the ${ADMIN_SCOPE} scope is granted only to administrators`);

/**
 * scopeForUser for the user `userId` as they are now, without refusing: what a standing grant (a
 * refresh token, an exchanged token's subject) still carries once its user lost the role. The user
 * is read only when the scope holds `admin`.
 */
export async function currentScopeOf(
  storage: { readonly users: Pick<UserStore, 'get'> },
  userId: string,
  scope: readonly string[],
): Promise<string[]> {
  return scope.includes(ADMIN_SCOPE) ? scopeForUser(scope, await storage.users.get(userId)) : [...scope];
}
