import { randomUUID } from 'node:crypto';
import { AccountLockout } from '../account-lockout.js';
import { invalidGrant, invalidRequest, tooManyAttempts } from '../errors.js';
import { hashPassword, needsRehash, verifyPassword } from '../passwords.js';
import { parseScope, resolveScope } from '../scopes.js';
import type { GrantContext, GrantHandler } from './grant-handler.js';

/** Throws 429 while the counter is over its limit, before any password is checked. */
async function refuseWhileThrottled(
  key: string,
  limit: number,
  { storage, clock }: GrantContext,
): Promise<void> {
  const now = clock.now();
  const { count, resetAt } = await storage.throttle.peek(key, now);
  if (count >= limit) throw tooManyAttempts(Math.max(1, resetAt - now));
}

/** RFC 6749 §4.3, for trusted clients only (the client must be registered for it). */
export const passwordGrant = {
  grantType: 'password',
  allowsPublicClients: true,
  async handle({ client, params }, context) {
    const { storage, clock, issuer, policy } = context;
    const { username, password } = params;
    if (username === undefined || username === '') throw invalidRequest('username is required');
    if (password === undefined) throw invalidRequest('password is required');
    const scope = resolveScope(parseScope(params.scope), client.scopes);

    const clientKey = `password:client:${client.id}`;
    // The per-client counter only counts failures (a busy trusted client logs many users in); the
    // per-user-name one counts every attempt and is reset by a success.
    await refuseWhileThrottled(clientKey, policy.passwordFailuresPerClient, context);
    const lockout = new AccountLockout(storage.throttle, clock, {
      maxAttempts: policy.passwordFailuresPerUsername,
      windowSeconds: policy.passwordFailureWindowSeconds,
    });
    const locked = await lockout.reserve(username);
    if (locked !== undefined) throw tooManyAttempts(locked);

    const user = await storage.users.getByUsername(username);
    if (!(await verifyPassword(user?.passwordHash, password)) || user === undefined) {
      await storage.throttle.hit(clientKey, policy.passwordFailureWindowSeconds, clock.now());
      // Design decision 1: the seed answers a wrong user name or password with 401.
      throw invalidGrant('wrong user name or password', 401);
    }
    await lockout.succeeded(username);
    if (needsRehash(user.passwordHash)) {
      const now = clock.now();
      await storage.users.update({ ...user, passwordHash: await hashPassword(password), updatedAt: now });
    }

    // Each password login is its own grant: revoking one session leaves the others alone. It lasts as
    // long as its first refresh token could (or its access token, without one), so a login is
    // repeated after that and the purge can delete the grant: no login leaves a row behind forever.
    const now = clock.now();
    const withRefreshToken = client.grantTypes.includes('refresh_token');
    const grant = {
      id: randomUUID(),
      clientId: client.id,
      userId: user.id,
      scope,
      createdAt: now,
      expiresAt: now + (withRefreshToken ? policy.refreshTokenTtl : policy.accessTokenTtl),
      revokedAt: null,
    };
    await storage.grants.insert(grant);
    return issuer.issue({ client, subject: user.id, scope, grant, withRefreshToken });
  },
} satisfies GrantHandler;
