import type { Client, User } from '../model.js';

/**
 * GATEHOUSE_REQUIRE_MFA (docs/decisions.md, decision 34): who must sign in with a second factor after
 * the password. `admins`: the users with the administrator role (decision 29), whose tokens manage
 * every client, user and key.
 */
export const MFA_POLICIES = ['off', 'admins', 'all'] as const;
export type MfaPolicy = (typeof MFA_POLICIES)[number];

/**
 * Whether this sign-in must use a second factor: the server's policy for the user, or the client the
 * sign-in is for (`require_mfa`). A user with a second factor uses it whatever this says.
 */
export function mustUseSecondFactor(
  policy: MfaPolicy,
  user: Pick<User, 'admin'>,
  client?: Pick<Client, 'requireMfa'>,
): boolean {
  if (client?.requireMfa === true) return true;
  return policy === 'all' || (policy === 'admins' && user.admin);
}
