import { randomUUID } from 'node:crypto';
import { AccountLockout, cannotBeUsername, SourceFailures } from '../users/account-lockout.js';
import { requireScopeForUser } from '../scopes/admin-scope.js';
import { invalidGrant, invalidRequest, tooManyAttempts, unauthorizedClient } from '../errors.js';
import { hashPassword, needsRehash, verifyPassword } from '../users/passwords.js';
import { resolveScopeForResources, urisOf } from '../scopes/resources.js';
import { parseScope } from '../scopes/scopes.js';
import { mustUseSecondFactor } from '../users/second-factor-policy.js';
import type { GrantHandler } from './grant-handler.js';

// One answer (401 invalid_grant) for a wrong user name and a wrong password: neither tells which exists.
const wrongCredentials = () => invalidGrant('wrong user name or password', 401);

/** RFC 6749 §4.3, for trusted clients only (the client must be registered for it). */
export const passwordGrant = {
  grantType: 'password',
  allowsPublicClients: true,
  async handle({ client, params, address, resources: resourceValues, dpop }, context) {
    const { storage, clock, issuer, policy, resources } = context;
    // Decision 41: failed sign-ins through this grant are recorded as the sign-in page's are, with the
    // client and the address; never the name typed (people type passwords into it) nor the password.
    const failed = async (type: 'sign-in.failed' | 'sign-in.locked-out', detail: string, userId?: string) => {
      await context.audit?.record(
        { actor: null, address },
        {
          type,
          clientId: client.id,
          ...(userId === undefined ? {} : { userId }),
          detail: `password grant: ${detail}`,
        },
      );
    };
    // RFC 6749 §10.7, RFC 9700 §2.4: a client without a secret cannot be told from anyone who read its
    // id, so by default it may not collect passwords (unauthorized_client, RFC 6749 §5.2); the operator
    // can allow it.
    if (client.isPublic && policy.allowPublicPasswordGrant !== true) {
      throw unauthorizedClient('public clients may not use the password grant on this server');
    }
    const { username, password } = params;
    if (username === undefined || username === '') throw invalidRequest('username is required');
    if (password === undefined) throw invalidRequest('password is required');
    // RFC 8707 §2: the resource servers the tokens are for; checked, like the scope, before any
    // password is counted.
    const targets = await resources.resolve(resourceValues);
    const asked = resolveScopeForResources(parseScope(params.scope), client.scopes, targets);

    // Failures are counted per source, never per client: unauthenticated traffic naming a public
    // client's id must not be able to stop that client for everyone.
    const failures = new SourceFailures(storage.throttle, clock, {
      maxFailures: policy.passwordFailuresPerSource,
      windowSeconds: policy.passwordFailureWindowSeconds,
    });
    const refused = await failures.refusal(address);
    if (refused !== undefined) {
      await failed('sign-in.locked-out', 'too many failures from this address');
      throw tooManyAttempts(refused);
    }
    // A name longer than any registered one is a wrong user name; checked before it becomes a key.
    if (cannotBeUsername(username)) {
      await failures.failed(address);
      await failed('sign-in.failed', 'wrong user name or password');
      throw wrongCredentials();
    }
    const lockout = new AccountLockout(storage.throttle, clock, {
      maxAttempts: policy.passwordFailuresPerUsername,
      windowSeconds: policy.passwordFailureWindowSeconds,
    });
    const locked = await lockout.reserve(username, address);
    if (locked !== undefined) {
      await failed('sign-in.locked-out', 'too many failures for this account');
      throw tooManyAttempts(locked);
    }

    const user = await storage.users.getByUsername(username);
    if (!(await verifyPassword(user?.passwordHash, password)) || user === undefined) {
      await failures.failed(address);
      await failed('sign-in.failed', 'wrong user name or password');
      throw wrongCredentials();
    }
    // Decision 37: a disabled user gets no tokens; said only after the right password, and the attempt
    // stays counted (no `succeeded`) as at the sign-in page (SignInService).
    if (user.disabled) {
      await failed('sign-in.failed', 'user disabled', user.id);
      throw invalidGrant('this user is disabled');
    }
    await lockout.succeeded(username, address);
    // Decision 34: the password grant has no step to ask for a code, so a user who signs in with a
    // second factor, or must (the policy, the client's require_mfa), cannot use it: a password alone
    // is not all it takes to sign in as them. Said only once the password is right.
    const totp = await storage.secondFactors.getTotp(user.id);
    if (totp?.confirmedAt != null || mustUseSecondFactor(policy.requireMfa ?? 'off', user, client)) {
      throw invalidGrant(
        'this user signs in with a second factor, which the password grant cannot ask for: use the authorization code flow',
      );
    }
    // Decision 29: `admin` only for an administrator, whatever the client may have.
    const scope = requireScopeForUser(asked, user);
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
    return issuer.issue({
      client,
      subject: user.id,
      scope,
      resources: urisOf(targets),
      grant,
      withRefreshToken,
      // RFC 9449 §5: the access token (and a public client's refresh token) bound to the proof's key.
      ...(dpop === undefined ? {} : { dpopJkt: dpop.jkt }),
    });
  },
} satisfies GrantHandler;
