import { randomUUID } from 'node:crypto';
import { invalidGrant, invalidRequest, tooManyAttempts } from '../errors.js';
import { hashPassword, needsRehash, verifyPassword } from '../passwords.js';
import { parseScope, resolveScope } from '../scopes.js';
import type { GrantContext, GrantHandler } from './grant-handler.js';

/** Throws 429 while either counter is over its limit, before any password is checked. */
async function refuseWhileThrottled(
  keys: { key: string; limit: number }[],
  { storage, clock }: GrantContext,
): Promise<void> {
  const now = clock.now();
  for (const { key, limit } of keys) {
    const { count, resetAt } = await storage.throttle.peek(key, now);
    if (count >= limit) throw tooManyAttempts(Math.max(1, resetAt - now));
  }
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

    const userKey = `password:user:${username.toLowerCase()}`;
    const clientKey = `password:client:${client.id}`;
    await refuseWhileThrottled(
      [
        { key: userKey, limit: policy.passwordFailuresPerUsername },
        { key: clientKey, limit: policy.passwordFailuresPerClient },
      ],
      context,
    );

    const user = await storage.users.getByUsername(username);
    if (!(await verifyPassword(user?.passwordHash, password)) || user === undefined) {
      const now = clock.now();
      await storage.throttle.hit(userKey, policy.passwordFailureWindowSeconds, now);
      await storage.throttle.hit(clientKey, policy.passwordFailureWindowSeconds, now);
      // Design decision 1: the seed answers a wrong user name or password with 401.
      throw invalidGrant('wrong user name or password', 401);
    }
    await storage.throttle.reset(userKey);
    if (needsRehash(user.passwordHash)) {
      const now = clock.now();
      await storage.users.update({ ...user, passwordHash: await hashPassword(password), updatedAt: now });
    }

    // Each password login is its own grant: revoking one session leaves the others alone.
    const now = clock.now();
    const grant = {
      id: randomUUID(),
      clientId: client.id,
      userId: user.id,
      scope,
      createdAt: now,
      expiresAt: null,
      revokedAt: null,
    };
    await storage.grants.insert(grant);
    const withRefreshToken = client.grantTypes.includes('refresh_token');
    return issuer.issue({ client, subject: user.id, scope, grant, withRefreshToken });
  },
} satisfies GrantHandler;
